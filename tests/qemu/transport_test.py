#!/usr/bin/env python3
"""Integration test of the other transports: the QEMU gdbstub on a unix
socket (run.sh --gdb unix) or a pty (run.sh --gdb pty, which vtice opens as
a serial device). Break on do_sys_openat2 (address from the guest's own
kallsyms) and unwind to entry_SYSCALL_64* over it.
"""
import os
import re
import subprocess
import sys

from rig import fail, kallsyms


def main():
    binary, kind = sys.argv[1], sys.argv[2]
    target = os.environ.get("VTICE_QEMU_TARGET", "")
    syms = os.environ.get("VTICE_QEMU_KALLSYMS")
    want_prefix = {"unix": "unix:", "pty": "/dev/pts/"}[kind]
    if not target.startswith(want_prefix):
        fail("run.sh gave target '%s' for --gdb %s" % (target, kind))
    run = subprocess.run([binary, "attach", target, "--symbols", syms, "--batch", "-", "--timeout", "60"],
                         input="break do_sys_openat2\ncontinue\nbt\ndelete\ndetach\n",
                         capture_output=True, text=True, timeout=180)
    out = run.stdout
    if run.returncode != 0:
        fail("vtice attach %s exited with %d" % (target, run.returncode), out, run.stderr)
    address = kallsyms(syms)["do_sys_openat2"]
    if "Breakpoint 1 at 0x%x <do_sys_openat2>" % address not in out.split("Continuing.")[-1]:
        fail("no stop at do_sys_openat2 over %s" % kind, out)
    names = re.findall(r"^#\d+\s+0x[0-9a-f]+ in ([A-Za-z0-9_.]+)", out, re.M)
    if len(names) < 4 or not names[3].startswith("entry_SYSCALL_64"):
        fail("bt over %s: %s" % (kind, names), out)
    print("PASS: %s transport (%s): break and bt %s" % (kind, target, " <- ".join(names[:4])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
