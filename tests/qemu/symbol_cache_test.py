#!/usr/bin/env python3
"""vtice attach's kernel cache against a real Debian guest under QEMU.

Attach 1 finds no cache: it recovers kallsyms and ORC from guest memory and
saves what it read under the kernel's banner. Attach 2 reads it back (the
banner at the same place is its only guest read for symbols). Attach 3
finds the cache file damaged: it must not use it, must say so by saving a
new one, and still get the same symbols. Every answer is checked against
the guest's own /proc/kallsyms (VTICE_QEMU_KALLSYMS), not against vtice.
Prints the whole-process time of each attach (not asserted: speed belongs
to benchmarks)."""

import glob
import os
import re
import sys
import time

from rig import fail, kallsyms, qemu_port, vtice

NAMES = ["do_sys_openat2", "getname", "linux_banner"]


def attach(binary, port):
    start = time.perf_counter()
    out = vtice(binary, port, ["print %s" % n for n in NAMES] + ["bt", "detach"], cache=True)
    return out, time.perf_counter() - start


def check_symbols(out, truth, which):
    for name in NAMES:
        m = re.search(r"^(0x[0-9a-f]+) \(-?\d+\) <%s>" % re.escape(name), out, re.M)
        if not m or int(m.group(1), 16) != truth[name]:
            fail("%s: print %s disagrees with the guest's kallsyms (%#x)" % (which, name, truth[name]), out)
    if not re.search(r"^#1\s+0x[0-9a-f]+ in \w+", out, re.M):
        fail("%s: bt has no second frame (ORC missing?)" % which, out)


def main():
    binary = sys.argv[1]
    port = qemu_port()
    cache_dir = os.path.join(os.environ["XDG_CACHE_HOME"], "vtice")
    truth = kallsyms(os.environ["VTICE_QEMU_KALLSYMS"])

    first, t1 = attach(binary, port)
    if "kernel cache: saved " not in first:
        fail("attach 1 with an empty cache did not save one", first)
    if "recovered from guest memory" not in first:
        fail("attach 1 did not recover symbols from guest memory", first)
    check_symbols(first, truth, "attach 1")
    files = glob.glob(os.path.join(cache_dir, "kernel-*.mem"))
    if len(files) != 1:
        fail("expected one cache file in %s, found %s" % (cache_dir, files), first)

    second, t2 = attach(binary, port)
    if "kernel cache: read %s" % files[0] not in second:
        fail("attach 2 did not read the cache", second)
    check_symbols(second, truth, "attach 2")

    with open(files[0], "r+b") as f:  # one flipped byte in the middle
        f.seek(os.path.getsize(files[0]) // 2)
        b = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([b[0] ^ 0xff]))
    third, t3 = attach(binary, port)
    if "kernel cache: read" in third or "kernel cache: saved " not in third:
        fail("attach 3 used a damaged cache, or did not replace it", third)
    check_symbols(third, truth, "attach 3")

    print("PASS: attach (whole process) %.2f s recovering from memory, %.2f s from the cache, "
          "%.2f s after the cache was damaged (ignored and rewritten); %d bytes cached"
          % (t1, t2, t3, os.path.getsize(files[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
