#!/usr/bin/env python3
"""Real gdb as the client of the hypervisor stub's RSP engine.

Starts vtice-rsp-sim (the engine's C code over a fake 2-CPU machine whose
text is NOPs, see rsp_fake_machine.hpp) and drives it with stock gdb, no
symbols: gdb must accept the target description and the register packet,
read memory, list the CPUs as threads, hit a software breakpoint, step,
stop on a watchpoint, pass a monitor command, and detach. Every expectation
is what gdb itself prints for a stub that follows the protocol; gdb is the
oracle. Exits 77 (skip) when gdb is not installed.
"""

import shutil
import socket
import subprocess
import sys

TEXT = 0xFFFFFFFF81000000
DATA = 0xFFFF888000100000


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    if not shutil.which("gdb"):
        print("SKIP: gdb is not installed (tools/deps.sh installs it)")
        return 77
    port = free_port()
    sim = subprocess.Popen([sys.argv[1], str(port)], stdout=subprocess.PIPE, text=True)
    assert sim.stdout.readline().strip() == "listening"
    cmds = [
        "set architecture i386:x86-64",
        "set confirm off",
        "target remote 127.0.0.1:%d" % port,
        "info registers rip rax eflags",
        "p/x $fs_base",
        "p/x $cr3",
        "x/4xb 0x%x" % DATA,
        "x/2xb 0xffffffffffff0000",
        "info threads",
        "break *0x%x" % (TEXT + 0x40),
        "continue",
        "stepi",
        "p/x $pc",
        "delete",
        "set *(unsigned char *)0x%x = 0x5a" % (DATA + 8),
        "x/1xb 0x%x" % (DATA + 8),
        "watch *(long *)0x%x" % (DATA + 0x20),
        "continue",
        "delete",
        "monitor exits",
        "thread 2",
        "p/x $rax",
        "detach",
    ]
    args = ["gdb", "-nx", "-batch", "-q"]
    for c in cmds:
        args += ["-ex", c]
    out = subprocess.run(args, capture_output=True, text=True, timeout=90)
    sim.wait(timeout=10)
    text = out.stdout + out.stderr
    print(text)
    expect = [
        ("registers", "rip            0x%x" % (TEXT + 0x10)),
        ("rax", "0x1111"),
        ("segment base", "$1 = 0x0"),
        ("system register", "$2 = 0x1234000"),
        ("memory", "0x00\t0x07\t0x0e\t0x15"),
        ("unmapped", "Cannot access memory at address 0xffffffffffff0000"),
        ("threads", "Thread 2"),
        ("breakpoint", "Breakpoint 1, 0x%016x in ?? ()" % (TEXT + 0x40)),
        ("stepi", "$3 = 0x%x" % (TEXT + 0x41)),
        ("write", "0x5a"),
        ("watchpoint", "hit Hardware watchpoint 2: *(long *)0x%x" % (DATA + 0x20)),
        ("monitor", "cpu 0: 42 exits"),
        ("thread 2 regs", "$4 = 0x2222"),
        ("detach", "[Inferior 1 (Remote target) detached]"),
    ]
    failed = [name for name, want in expect if want not in text]
    for name, want in expect:
        print("%s %s: %r" % ("FAIL" if name in failed else "ok  ", name, want))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
