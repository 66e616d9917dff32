#!/usr/bin/env python3
"""Stock gdb on `vtice serve-replay` of a root recording.

A recording made in VMX root keeps 20 registers (the 16 general ones, rip,
eflags, fs_base, gs_base), not the segment and x87 registers gdb's amd64
target description must have whole. gdb must still take the description
(no "Architecture rejected"), show each register at its own name, the ones
the recording lacks as <unavailable>, and step, reverse-step and
reverse-continue to a watchpoint over it.

The file is root_fixture's: root_records.hpp's records written by hand as
include/uapi/vtice/records.h lays them out (a register file, then
`mov [rbx+8], rax; push rcx; mov rdx, [rbx+8]`). The expected values are
those hand-written inputs and what the three instructions do (SDM Vol. 2);
gdb is the client. Exits 77 (skip) when gdb is not installed.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

RIP = 0xFFFFFFFF81234000
DATA = 0xFFFF888001000000
STACK = 0xFFFFC90000203F00

# root_records.hpp's register file: RBX DATA, RSP STACK, RFLAGS 0x246, and
# 0x100 + n for the others by their VTICE_STEP_REG_* number (ModRM order).
START = {"rax": 0x100, "rcx": 0x101, "rdx": 0x102, "rbx": DATA, "rsp": STACK, "rbp": 0x105,
         "rsi": 0x106, "rdi": 0x107, "r8": 0x108, "r15": 0x10F, "eflags": 0x246,
         "fs_base": 0x111, "gs_base": 0x112, "rip": RIP}

failures = []


def check(name, ok, detail):
    print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail))
    if not ok:
        failures.append(name)


def gdb_values(port, commands):
    """Runs gdb over the commands; returns its output and the values each
    `echo @NAME=` marker line was followed by."""
    args = ["gdb", "-nx", "-batch", "-ex", "set confirm off", "-ex", "target remote 127.0.0.1:%d" % port]
    for c in commands:
        args += ["-ex", c]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    text = out.stdout + out.stderr
    values = dict(re.findall(r"^@(\S+)=(.*)$", text, re.M))
    return text, values


def show(name, expr):
    return 'printf "@%s=%%#lx\\n", %s' % (name, expr)


def main():
    fixture, vtice = sys.argv[1], sys.argv[2]
    if not shutil.which("gdb"):
        print("SKIP: gdb is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="root-serve-")
    trace = os.path.join(work, "root.vtrace")
    subprocess.run([fixture, trace], check=True)
    server = subprocess.Popen([vtice, "serve-replay", trace, "--once"], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", line).group(1))
        commands = [show("start." + r, "$" + r) for r in START]
        commands += [show("start.data8", "*(long *)%#x" % (DATA + 8)),
                     'printf "@start.st0=%s\\n", $st0 == $st0 ? "available" : "?"',
                     "p $st0", "p $cs", "info registers fs",
                     "stepi", show("s1.rip", "$rip"), show("s1.data8", "*(long *)%#x" % (DATA + 8)),
                     "stepi", show("s2.rsp", "$rsp"), show("s2.slot", "*(long *)%#x" % (STACK - 8)),
                     "stepi", show("s3.rdx", "$rdx"), show("s3.rip", "$rip"),
                     "x/gx %#x" % (DATA + 0x100),
                     "reverse-stepi", "reverse-stepi", "reverse-stepi", show("back.rip", "$rip"),
                     show("back.rsp", "$rsp"), show("back.rdx", "$rdx"), show("back.data8", "*(long *)%#x" % (DATA + 8)),
                     "continue", "watch *(long *)%#x" % (DATA + 8), "reverse-continue", show("rc.rip", "$rip")]
        text, v = gdb_values(port, commands)
    finally:
        server.kill()
        server.wait()
    print(text)
    check("description", "rejected" not in text and "'g' packet" not in text,
          "gdb takes the target description and the 'g' block of 20 registers and the unavailable rest")
    wrong = ["%s %s, want %#x" % (r, v.get("start." + r), want) for r, want in START.items()
             if v.get("start." + r) != "%#x" % want]
    check("registers", not wrong, "; ".join(wrong) or "the 14 registers asked for, each at its own name")
    unavailable = text.count("<unavailable>")
    check("unavailable", unavailable >= 3 and "@start.st0=" not in text,
          "$st0, $cs and fs (the selector) answer <unavailable> (%d seen), never a value" % unavailable)
    check("memory-before", v.get("start.data8") == "0xaaaabbbbccccdddd", "[rbx+8] before the store: %s" %
          v.get("start.data8"))
    check("stepi", v.get("s1.rip") == "%#x" % (RIP + 4) and v.get("s1.data8") == "0x100",
          "after mov [rbx+8], rax: rip %s, [rbx+8] %s (rax 0x100)" % (v.get("s1.rip"), v.get("s1.data8")))
    check("push", v.get("s2.rsp") == "%#x" % (STACK - 8) and v.get("s2.slot") == "0x101",
          "after push rcx: rsp %s, its slot %s (rcx 0x101)" % (v.get("s2.rsp"), v.get("s2.slot")))
    check("load", v.get("s3.rdx") == "0x100" and v.get("s3.rip") == "%#x" % (RIP + 9),
          "after mov rdx, [rbx+8]: rdx %s, rip %s" % (v.get("s3.rdx"), v.get("s3.rip")))
    check("unseen-memory", "Cannot access memory at address %#x" % (DATA + 0x100) in text,
          "memory the recording never saw is an error, never a guess")
    check("reverse-continue", v.get("rc.rip") == "%#x" % RIP,
          "a write watchpoint on [rbx+8], run backwards from the end, stops at the store: rip %s" % v.get("rc.rip"))
    check("reverse-stepi", v.get("back.rip") == "%#x" % RIP and v.get("back.rsp") == "%#x" % STACK and
          v.get("back.rdx") == "0x102" and v.get("back.data8") == "0xaaaabbbbccccdddd",
          "three reverse-stepi from the end: rip %s rsp %s rdx %s [rbx+8] %s, as at the start" % (
              v.get("back.rip"), v.get("back.rsp"), v.get("back.rdx"), v.get("back.data8")))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
