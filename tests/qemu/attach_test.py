#!/usr/bin/env python3
"""Integration test: vtice attach (batch mode) against the real QEMU gdbstub,
with real gdb as the peer.

Run under tests/qemu/run.sh exec (which boots the guest and exports
VTICE_QEMU_PORT and VTICE_QEMU_KALLSYMS). Checks:
  1. break do_sys_openat2 + continue stops with RIP at the address the
     guest's own /proc/kallsyms gives for do_sys_openat2;
  2. bt (ORC from guest memory) lists do_sys_openat2 <- __x64_sys_openat <-
     do_syscall_64 <- entry_SYSCALL_64*;
  3. vtice ends with `disconnect` (the VM stays paused at that stop),
     then gdb -batch attaches to the same stop: every register both print and
     the x/8xg $rsp words must agree.
Exit 77 (skip) when gdb or the vtice binary is missing.
"""
import os
import re
import shutil
import subprocess
import sys

from rig import fail, kallsyms


def registers(text):
    """name -> value from 'info registers' lines of either tool."""
    regs = {}
    for line in text.splitlines():
        m = re.match(r"^([a-z][a-z0-9_]*)\s+(0x[0-9a-f]+)\b", line)
        if m:
            regs[m.group(1)] = int(m.group(2), 16)
    return regs


def words(text, marker):
    """Values of an x/8xg dump: the 0x... after each 'ADDR <sym>:' line."""
    values = []
    for line in text.splitlines():
        m = re.match(r"^(0x[0-9a-f]+)(?: <[^>]*>)?:\s+(.*)$", line)
        if m:
            values += [int(v, 16) for v in re.findall(r"0x[0-9a-f]+", m.group(2))]
    return values


def section(text, start, end):
    a = text.find(start)
    b = text.find(end, a + 1) if a >= 0 else -1
    return text[a:b] if a >= 0 and b >= 0 else ""


def main():
    vtice = sys.argv[1]
    port = os.environ.get("VTICE_QEMU_PORT")
    syms_path = os.environ.get("VTICE_QEMU_KALLSYMS")
    if not port or not os.path.exists(vtice):
        print("SKIP: run under tests/qemu/run.sh exec with a built vtice")
        return 77
    if not shutil.which("gdb"):
        print("SKIP: gdb (the peer) is not installed")
        return 77
    syms = kallsyms(syms_path)
    target = syms["do_sys_openat2"]

    # "print 0x1111" lines mark the sections of the output.
    batch = "\n".join([
        "break do_sys_openat2", "continue",
        "print 0x1111", "info registers",
        "print 0x2222", "x/8xg $rsp",
        "print 0x3333", "bt",
        "print 0x4444", "delete", "disconnect",
    ]) + "\n"
    run = subprocess.run([vtice, "attach", "127.0.0.1:" + port, "--symbols", syms_path, "--batch", "-",
                          "--timeout", "60"], input=batch, capture_output=True, text=True, timeout=120)
    out = run.stdout
    if run.returncode != 0:
        fail("vtice attach exited with %d" % run.returncode, out, run.stderr)

    m = re.search(r"Breakpoint 1 at (0x[0-9a-f]+) <do_sys_openat2>", out.split("Continuing.")[-1])
    if not m or int(m.group(1), 16) != target:
        fail("the stop is not at do_sys_openat2 = %#x (guest kallsyms)" % target, out)
    vregs = registers(section(out, "0x1111", "0x2222"))
    if vregs.get("rip") != target:
        fail("info registers: rip %#x != do_sys_openat2 %#x" % (vregs.get("rip", 0), target), out)

    bt = section(out, "0x3333", "0x4444")
    names = re.findall(r"^#\d+\s+0x[0-9a-f]+ in ([A-Za-z0-9_.]+)", bt, re.M)
    want = ["do_sys_openat2", "__x64_sys_openat", "do_syscall_64"]
    if names[:3] != want or len(names) < 4 or not names[3].startswith("entry_SYSCALL_64"):
        fail("bt frames %s, want %s <- entry_SYSCALL_64*" % (names, want), bt)
    if "? " in bt:
        fail("bt fell back to guesses", bt)

    # The peer: gdb on the very same stop (`disconnect` left it paused).
    gdb = subprocess.run(["gdb", "-batch", "-nx", "-ex", "set pagination off",
                          "-ex", "target remote 127.0.0.1:" + port,
                          "-ex", "echo @@REGS\\n", "-ex", "info registers",
                          "-ex", "echo @@X\\n", "-ex", "x/8xg $rsp",
                          "-ex", "echo @@END\\n", "-ex", "detach"],
                         capture_output=True, text=True, timeout=60)
    g = gdb.stdout
    gregs = registers(section(g, "@@REGS", "@@X"))
    if not gregs:
        fail("gdb printed no registers", g, gdb.stderr)
    common = sorted(set(gregs) & set(vregs))
    needed = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r15", "rip", "eflags", "cs",
              "ss", "fs_base", "gs_base", "cr0", "cr3", "cr4", "efer"}
    missing = needed - set(common)
    if missing:
        fail("registers missing from one side: %s" % sorted(missing), out, g)
    diff = [(r, vregs[r], gregs[r]) for r in common if vregs[r] != gregs[r]]
    if diff:
        fail("registers differ from gdb: " + ", ".join("%s vtice=%#x gdb=%#x" % d for d in diff), out, g)
    vx = words(section(out, "0x2222", "0x3333"), "x")
    gx = words(section(g, "@@X", "@@END"), "x")
    if len(vx) != 8 or vx != gx:
        fail("x/8xg $rsp differs: vtice %s gdb %s" % ([hex(v) for v in vx], [hex(v) for v in gx]), out, g)
    print("PASS: stop at do_sys_openat2 %#x; bt %s; %d registers and 8 stack words agree with gdb"
          % (target, " <- ".join(names[:4]), len(common)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
