#!/usr/bin/env python3
"""`vtice replay`'s accesses command on a root recording: the memory each
step's instruction read and wrote, with the bytes.

The file is root_fixture's (--decoded): root_records.hpp's records written
by hand in include/uapi/vtice/records.h's layout, eleven instructions with
what root's 8-byte windows saw of each. The expected lines are what each
instruction does to memory (SDM Vol. 2) with those hand-written values:
the store, push and load, a 16-byte MOVUPS (8 bytes seen, 8 past the
window unseen), XSAVE (unseen, 16 KiB marked), a 4-byte store (the rest
of the window only seen), and ADD to memory (read and written).
"""

import subprocess
import sys
import tempfile

DATA = 0xFFFF888001000000
STACK = 0xFFFFC90000203F00


def line(kind, address, length, text):
    return "%-7s 0x%016x %4d  %s" % (kind, address, length, text)


UNSEEN = "(a store the recording did not see: its bytes are unknown from here on)"
WANT = {
    0: [line("write", DATA + 8, 8, "ddddccccbbbbaaaa -> 0001000000000000")],   # mov [rbx+8], rax (0x100)
    1: [line("write", STACK - 8, 8, "5555000000000000 -> 0101000000000000")],  # push rcx (0x101)
    2: [line("read", DATA + 8, 8, "0001000000000000")],                         # mov rdx, [rbx+8]
    4: [line("write", DATA + 0x10, 8, "0000000000000000 -> 2222000000000000"),
        line("unseen", DATA + 0x18, 8, UNSEEN)],                                # movups [rbx+0x10], xmm0
    6: [line("unseen", DATA + 0x40, 16384, UNSEEN)],                            # xsave64 [rbx+0x40]
    7: [line("write", DATA + 0x20, 4, "00000000 -> 05000000"),
        line("seen", DATA + 0x24, 4, "99999999")],                              # mov dword [rbx+0x20], 5
    8: [line("write", DATA + 0x28, 8, "0101000000000000 -> 0101000000000000")],  # mov [rbx+0x28], rcx: same value
    9: [line("seen", DATA + 0x30, 8, "7700000000000000")],                      # lea: no access, the window kept
    10: [line("both", DATA + 0x38, 4, "10000000 -> 11000000"),
         line("seen", DATA + 0x3C, 4, "00000000")],                             # add dword [rbx+0x38], 1
    11: ["(the end of the recording: no instruction runs here)"],
}


def main():
    fixture, vtice = sys.argv[1], sys.argv[2]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = tmp + "/root.vtrace"
        subprocess.run([fixture, path, "--decoded"], check=True)
        for step, want in WANT.items():
            out = subprocess.run([vtice, "replay", path, "--batch", "-"], input="goto %d\naccesses\n" % step,
                                 capture_output=True, text=True, check=True).stdout.splitlines()
            got = out[out.index(next(l for l in out if l.startswith("step %d of" % step))) + 1:]
            ok = got == want
            failures += not ok
            print("%s step %d: %s" % ("PASS" if ok else "FAIL", step, got if not ok else "%d lines" % len(got)))
            if not ok:
                print("  want %s" % want)
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
