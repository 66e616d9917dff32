#!/usr/bin/env python3
"""Real gdb as the client of the hypervisor stub's RSP engine.

Starts vtice-rsp-sim (the engine's C code over a fake 2-CPU machine whose
text is NOPs, see rsp_fake_machine.hpp) and drives it with stock gdb, no
symbols: gdb must accept the target description and the register packet,
read memory, list the CPUs as threads, hit a software breakpoint, step,
stop on a watchpoint, pass a monitor command, and detach. Every expectation
is what gdb itself prints for a stub that follows the protocol; gdb is the
oracle. Exits 77 (skip) when gdb is not installed.

Then gdb's own branch-trace client: a small kernel-like snippet (SNIPPET,
assembled with `as` at the fake text, its functions global symbols of an
ELF gdb loads) runs under `record btrace bts` from `outer` to `fd_install`
with an interrupt inside do_filp_open; the sim serves the tracer's records
(rsp_sim.cpp, SCRIPT). `record function-call-history` must list getname,
do_filp_open and path_openat, `record instruction-history` the
instructions before the stop, and an unchanged trace must be read once
for all three record commands (qXfer:btrace:read "new").
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

TEXT = 0xFFFFFFFF81000000
DATA = 0xFFFF888000100000


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# openat's shape in miniature. Labels with a dot are branch sites and landing
# points (local: gdb names code by the global function symbols only).
SNIPPET = """
        .text
        .globl outer, getname, do_filp_open, path_openat, fd_install, irq_handler
        .type outer, @function
outer:  nop
.Lo_call1: call getname
.Lo_call2: call do_filp_open
.Lo_call3: call fd_install
        ret
        .type getname, @function
getname: push %rbx
        mov $2, %ecx
.Lg_loop: dec %ecx
.Lg_jnz: jnz .Lg_loop
        pop %rbx
.Lg_ret: ret
        .type do_filp_open, @function
do_filp_open: push %rbp
.Ld_irq: nop
.Ld_call: call path_openat
.Ld_after: pop %rbp
.Ld_ret: ret
        .type path_openat, @function
path_openat: mov %rdi, %rax
.Lp_jmp: jmp .Lp_tail
        ud2
.Lp_tail: add $1, %rax
.Lp_ret: ret
        .type fd_install, @function
fd_install: nop
        ret
        .type irq_handler, @function
irq_handler: push %rax
        pop %rax
.Li_iret: iretq
"""

# What the tracer records from outer to fd_install (from, to, async): the
# interrupt arrives before the nop at .Ld_irq runs and iretq returns there.
RUN = [
    (".Lo_call1", "getname", False), (".Lg_jnz", ".Lg_loop", False),
    (".Lg_ret", ".Lo_call2", False), (".Lo_call2", "do_filp_open", False),
    (".Ld_irq", "irq_handler", True), (".Li_iret", ".Ld_irq", False),
    (".Ld_call", "path_openat", False), (".Lp_jmp", ".Lp_tail", False),
    (".Lp_ret", ".Ld_after", False), (".Ld_ret", ".Lo_call3", False),
    (".Lo_call3", "fd_install", False),
]


def build_snippet(tmp):
    """The snippet linked at the fake text: (ELF for gdb, raw code, label -> address).
    Its labels come from a copy assembled with -L (local labels kept)."""
    src = os.path.join(tmp, "snippet.S")
    with open(src, "w") as f:
        f.write(SNIPPET)
    addrs = {}
    for name, flags in (("snippet", []), ("labels", ["-L"])):
        obj, elf = os.path.join(tmp, name + ".o"), os.path.join(tmp, name + ".elf")
        subprocess.run(["as", "--64"] + flags + ["-o", obj, src], check=True)
        subprocess.run(["ld", "-Ttext=0x%x" % TEXT, "-e", "outer", "-o", elf, obj], check=True)
    code = os.path.join(tmp, "snippet.bin")
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", os.path.join(tmp, "snippet.elf"), code],
                   check=True)
    nm = subprocess.run(["nm", os.path.join(tmp, "labels.elf")], capture_output=True, text=True,
                        check=True).stdout
    for line in nm.splitlines():
        addr, _, name = line.split()
        addrs[name] = int(addr, 16)
    return os.path.join(tmp, "snippet.elf"), code, addrs


def check_btrace(sim_path):
    """gdb's record btrace over the snippet; a list of (name, ok, detail)."""
    missing = [t for t in ("as", "ld", "objcopy", "nm") if not shutil.which(t)]
    if missing:
        return [("btrace tools", False, "binutils missing: " + " ".join(missing))]
    with tempfile.TemporaryDirectory() as tmp:
        elf, code, at = build_snippet(tmp)
        script = os.path.join(tmp, "run.script")
        with open(script, "w") as f:
            f.write("code %s\npc %x\nrun %x\n" % (code, at["outer"], at["fd_install"]))
            for src, dst, is_async in RUN:
                f.write("branch %x %x%s\n" % (at[src], at[dst], " async" if is_async else ""))
        port = free_port()
        sim = subprocess.Popen([sim_path, str(port), script], stdout=subprocess.PIPE, text=True)
        assert sim.stdout.readline().strip() == "listening"
        cmds = ["set confirm off", "file " + elf, "target remote 127.0.0.1:%d" % port,
                "record btrace bts", "break fd_install", "continue", "set debug remote 1",
                "info record", "record function-call-history", "record instruction-history",
                "set debug remote 0", "record stop", "detach"]
        args = ["gdb", "-nx", "-batch", "-q"]
        for c in cmds:
            args += ["-ex", c]
        out = subprocess.run(args, capture_output=True, text=True, timeout=60)
        sim.wait(timeout=10)
    text = out.stdout + out.stderr
    print("\n".join(l for l in text.splitlines() if "[remote]" not in l))
    calls = re.findall(r"^\d+\t(\w+)$", out.stdout, re.M)
    insns = re.findall(r"^\d+\t\s+0x[0-9a-f]+ <([\w+]+)>:\t(\S+)", out.stdout, re.M)
    reads = re.findall(r"Sending packet: \$qXfer:btrace:read:(\w+):0,", text)
    empty_new = len(re.findall(r"Packet received: l<!DOCTYPE btrace[^\n]*<btrace version=\"1.0\">\\n</btrace>", text))
    # Counted by hand from SNIPPET: outer 2, getname 8 (the loop runs twice),
    # outer 1, do_filp_open 2 (push, and the nop the interrupt came before:
    # a BTS block ends at the instruction an interrupt did not let run, as
    # hardware BTS records it), irq_handler 3, do_filp_open 2 (that nop
    # again, the call), path_openat 4, do_filp_open 2, outer 1: 25.
    # fd_install's first instruction is where the CPU stands, not history.
    want_calls = ["outer", "getname", "outer", "do_filp_open", "irq_handler", "do_filp_open",
                  "path_openat", "do_filp_open", "outer"]
    return [
        ("btrace gdb ran", out.returncode == 0, "exit %d" % out.returncode),
        ("btrace info record", "Recorded 25 instructions in 9 functions (0 gaps)" in text,
         "25 instructions, 9 function segments, no gap"),
        ("btrace function-call-history", calls == want_calls, " ".join(calls)),
        # push 1 byte, nop 1, call 5: pop at +7 (outer: nop 1, calls of 5)
        ("btrace instruction-history", insns[-3:] == [("do_filp_open+7", "pop"), ("do_filp_open+8", "ret"),
                                                     ("outer+11", "call")], str(insns[-3:])),
        # each command asks "delta" (refused), then "new": whole the first
        # time, empty (no <block>) the other two, so gdb keeps its decoding
        ("btrace read once", reads == ["delta", "new"] * 3 and empty_new == 2,
         "%s; %d empty" % (" ".join(reads), empty_new)),
    ]


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
    for name, ok, detail in check_btrace(sys.argv[1]):
        print("%s %s: %s" % ("ok  " if ok else "FAIL", name, detail))
        if not ok:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
