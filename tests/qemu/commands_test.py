#!/usr/bin/env python3
"""Integration test: run-control and memory commands against the real QEMU
gdbstub, each checked against something vtice did not compute itself.

  hbreak        stops at __x64_sys_getpid (Z1), address from guest kallsyms
  break ... if  a false condition ($rdi == 1 at do_sys_openat2, whose dfd is
                AT_FDCWD) never stops, although the workload opens before each
                getpid; a true one ($rdi == AT_FDCWD) does
  finish        returns into __x64_sys_openat at the return address bt showed,
                with rax = 3 (the workload's fd: 0-2 are the console)
  nexti         over do_sys_openat2's first call lands on the next instruction
                (address from gdb's own disassembly)
  watch         a write watchpoint on jiffies_64 reports that address
  vtop          page walk from CR3, read back with QEMU's monitor `xp` (a
                physical read) equals `x/1xg` of the virtual address
  Ctrl-C        SIGINT during a `continue` with no breakpoint sends 0x03 and
                the guest stops ("Interrupted at", signal 2 from QEMU)
  set           $rax at a function's entry (dead there) and 8 bytes of the
                unused padding after jiffies_64 read back as written
  probe         refused on QEMU's stub, which arms no vtice probes, before
                anything runs; --check still checks the program; the session
                goes on (its registers read after it)
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from rig import fail, kallsyms
from rig import vtice as rig_vtice


def vtice(binary, port, syms, commands):
    return rig_vtice(binary, port, commands, "--symbols", syms)


def stops(out):
    return re.findall(r"^(?:Breakpoint \d+|Temporary breakpoint \d+|Stopped) at (0x[0-9a-f]+)", out, re.M)


def main():
    binary = sys.argv[1]
    port = os.environ.get("VTICE_QEMU_PORT")
    syms_path = os.environ.get("VTICE_QEMU_KALLSYMS")
    if not port or not shutil.which("gdb"):
        print("SKIP: needs run.sh exec and gdb")
        return 77
    k = kallsyms(syms_path)

    out = vtice(binary, port, syms_path, [
        "hbreak __x64_sys_getpid", "continue", "delete",
        "break do_sys_openat2 if $rdi == 1", "tbreak __x64_sys_getpid", "continue", "info breakpoints",
        "delete",
        "break do_sys_openat2 if $rdi == 0xffffff9c", "continue", "bt 2",
        "set $rax = 0x1234", "info registers rax", "finish", "delete",
        "watch -l8 jiffies_64", "continue", "delete",
        "vtop jiffies_64", "x/1xg jiffies_64"])
    if "Hardware assisted breakpoint 1" not in out:
        fail("hbreak did not set a hardware breakpoint", out)
    first = out.split("Continuing.")
    if len(first) < 5:
        fail("expected four continues", out)
    # __ia32_sys_getpid is an alias at the same address: compare addresses.
    getpid = "at 0x%x <" % k["__x64_sys_getpid"]
    if getpid not in first[1].split("\n")[1]:
        fail("hbreak did not stop at __x64_sys_getpid", out)
    if getpid not in first[2].split("\n")[1]:
        fail("the false condition stopped, or the tbreak did not", first[2])
    m = re.search(r"^(\d+)\s+breakpoint\s+keep y\s+0x[0-9a-f]+\s+(\d+) do_sys_openat2 if", first[2], re.M)
    if not m or m.group(2) != "0":
        fail("the conditional breakpoint shows hits", first[2])
    third = first[3]
    if "<do_sys_openat2>" not in third.split("\n")[1]:
        fail("the true condition did not stop at do_sys_openat2", third)
    ret = re.search(r"^#1\s+(0x[0-9a-f]+) in __x64_sys_openat", third, re.M)
    fin = re.search(r"Run till exit\n=> (0x[0-9a-f]+) <__x64_sys_openat\+0x[0-9a-f]+>", third)
    if not ret or not fin or int(ret.group(1), 16) != int(fin.group(1), 16):
        fail("finish did not return to the caller bt showed", third)
    if not re.search(r"^rax\s+0x1234\b", third, re.M):
        fail("set $rax did not read back (rax is dead at a function's entry)", third)
    if "Value returned: rax = 0x3 (3)" not in third:
        fail("finish: the workload's fd should be 3", third)
    fourth = first[4]
    w = re.search(r"watchpoint \d+ hit \(address (0x[0-9a-f]+)\)", fourth)
    if not w or int(w.group(1), 16) != k["jiffies_64"]:
        fail("watchpoint on jiffies_64 (%#x) did not report it" % k["jiffies_64"], fourth)
    pa = re.search(r"-> physical (0x[0-9a-f]+)", fourth)
    xv = re.search(r"<jiffies_64>:\s+(0x[0-9a-f]+)", fourth)
    if not pa or not xv:
        fail("vtop / x output missing", fourth)

    # QEMU's own physical read of that address, through the monitor.
    # Memory writes ('X' or 'M'): the cache-line padding after jiffies_64
    # (jiffies_seq starts 0x40 further on) is unused; it is restored to 0.
    mon = vtice(binary, port, syms_path, ["monitor xp /1gx " + pa.group(1), "x/1xg jiffies_64",
                                          "set *(u64*)(jiffies_64+8) = 0x1122334455667788",
                                          "x/2xg jiffies_64", "set *(u64*)(jiffies_64+8) = 0",
                                          "x/2xg jiffies_64"])
    dumps = re.findall(r"<jiffies_64>:[ \t]+0x[0-9a-f]+[ \t]+(0x[0-9a-f]+)", mon)
    if dumps != ["0x1122334455667788", "0x0000000000000000"]:
        fail("memory write did not read back", mon)
    mv = re.search(r"^[0-9a-f]+: (0x[0-9a-f]+)", mon, re.M)
    xv2 = re.search(r"<jiffies_64>:\s+(0x[0-9a-f]+)", mon)
    if not mv or not xv2 or int(mv.group(1), 16) != int(xv2.group(1), 16):
        fail("xp at the translated address differs from x at the virtual one", mon)

    # nexti over the first call in do_sys_openat2; the call's address and
    # length come from gdb's disassembly of the same bytes.
    gdb = subprocess.run(["gdb", "-batch", "-nx", "-ex", "target remote 127.0.0.1:" + port,
                          "-ex", "x/40i 0x%x" % k["do_sys_openat2"], "-ex", "detach"],
                         capture_output=True, text=True, timeout=60)
    lines = re.findall(r"^\s*(?:=> )?(0x[0-9a-f]+)[^:]*:\s+(\S+)", gdb.stdout, re.M)
    call = next((i for i, (a, op) in enumerate(lines) if op.startswith("call")), None)
    if call is None or call + 1 >= len(lines):
        fail("gdb shows no call in do_sys_openat2", gdb.stdout)
    call_at, after = int(lines[call][0], 16), int(lines[call + 1][0], 16)
    out2 = vtice(binary, port, syms_path, ["break *0x%x" % call_at, "continue", "delete", "nexti",
                                           "info registers rip"])
    rip = re.search(r"^rip\s+(0x[0-9a-f]+)", out2, re.M)
    if not rip or int(rip.group(1), 16) != after:
        fail("nexti over the call at %#x should stop at %#x" % (call_at, after), out2)
    # Ctrl-C: vtice forwards SIGINT to the stub as 0x03.
    proc = subprocess.Popen([binary, "attach", "127.0.0.1:" + port, "--batch", "-", "--timeout", "60", "--no-cache"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write("continue\ninfo registers rip\ndetach\n")
    proc.stdin.flush()
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    try:
        out3, err3 = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("SIGINT did not stop the target")
    if proc.returncode != 0 or "Interrupted at" not in out3:
        fail("SIGINT during continue: exit %d" % proc.returncode, out3, err3)
    # probe needs the vtice hypervisor's stub: refused here, the session goes on.
    run = subprocess.run([binary, "attach", "127.0.0.1:" + port, "--batch", "-", "--timeout", "60", "--no-cache",
                          "--keep-going", "--symbols", syms_path],
                         input="probe 'fn:vfs_read { @c = count(); }'\nprobe --check 'fn:vfs_read { @c = count(); }'\n"
                               "info registers rip\ndetach\n", capture_output=True, text=True, timeout=120)
    said = run.stdout + run.stderr
    if ("arms no probes: probe needs the vtice hypervisor's stub" not in said or "program: OK: 1 probe" not in said
            or not re.search(r"^rip\s+0x", run.stdout, re.M)):
        fail("probe on QEMU's stub: want a refusal, a --check that passes, then the session", said)
    print("PASS: hbreak, conditional break (false passes, true stops), finish (rax=3), watch jiffies_64, "
          "set $rax, memory write, vtop vs monitor xp, nexti over call %#x -> %#x, Ctrl-C interrupt, probe refused on QEMU's stub" % (call_at, after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
