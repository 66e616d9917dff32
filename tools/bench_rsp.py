#!/usr/bin/env python3
"""The measuring half of tools/bench-rsp.sh (runs under tests/qemu/run.sh exec)."""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "qemu"))
from rig import GDB_STEP_COUNT, gdb_step_count, kallsyms, vtice as rig_vtice  # noqa: E402



def vtice(binary, port, commands):
    return rig_vtice(binary, port, commands, timeout=600)


def summaries(text):
    return [(int(m.group(1)), int(m.group(2)), float(m.group(3))) for m in
            re.finditer(r"trace: (\d+) instructions .*?, (\d+) steps, .*? ([0-9.]+) s", text)]


def raw_step_round_trip(port, count=2000):
    """Seconds per bare vCont;s + stop reply, the protocol's floor per step."""
    s = socket.create_connection(("127.0.0.1", int(port)))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = b""

    def request(p):
        nonlocal buf
        s.sendall(b"$%s#%02x" % (p.encode(), sum(p.encode()) & 255))
        while True:
            i = buf.find(b"#")
            if i >= 0 and len(buf) >= i + 3 and b"$" in buf[:i]:
                buf = buf[i + 3:]
                s.sendall(b"+")
                return
            buf += s.recv(65536)
    request("qSupported:multiprocess+")
    t0 = time.perf_counter()
    for _ in range(count):
        request("vCont;s:p1.1")
    elapsed = (time.perf_counter() - t0) / count
    request("D;1")
    s.close()
    return elapsed


def whole_vtice(binary, port, runs, cache):
    """Wall seconds of whole `vtice attach` processes: connect, kallsyms and
    ORC (from guest memory, or the kernel cache), the trace, detach at EOF."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run = subprocess.run([binary, "attach", "127.0.0.1:" + port, "--batch", "-"] + ([] if cache else ["--no-cache"]),
                             input="trace syscall openat --comm vtice-work --quiet\n", capture_output=True, text=True,
                             timeout=600)
        times.append(time.perf_counter() - t0)
        if run.returncode != 0 or "trace: " not in run.stdout:
            sys.exit("bench-rsp: vtice attach failed:\n" + run.stdout[-2000:] + run.stderr[-2000:])
    return sorted(times)


def whole_gdb(port, openat, script):
    """Wall seconds of a whole gdb process doing the same: connect, break on
    the syscall (by the guest's kallsyms address: the image Debian ships
    has no symbol table gdb reads), stepi to its return, detach."""
    t0 = time.perf_counter()
    g = subprocess.run(["gdb", "-batch", "-nx", "-ex", "set pagination off",
                        "-ex", "target remote 127.0.0.1:" + port, "-ex", "break *0x%x" % openat,
                        "-ex", "continue", "-ex", "delete", "-x", script, "-ex", "detach"],
                       capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - t0
    if "GDB " not in g.stdout:
        sys.exit("bench-rsp: gdb did not finish:\n" + g.stdout[-2000:] + g.stderr[-2000:])
    return elapsed


def main():
    binary, runs = sys.argv[1], int(sys.argv[2])
    port = os.environ["VTICE_QEMU_PORT"]
    cmd = "trace syscall openat --comm vtice-work --quiet"
    block = summaries(vtice(binary, port, [cmd] * runs))
    step = summaries(vtice(binary, port, [cmd + " --step"]))
    insns, _, block_best = min(block, key=lambda r: r[2])
    _, step_steps, step_time = step[0]
    # gdb on the next openat of vtice-work: vtice stops there and quits
    # with `disconnect`, so the VM stays paused there for gdb.
    out = vtice(binary, port, ["break __x64_sys_openat", "continue", "info task", "delete", "disconnect"])
    if 'comm "vtice-work"' not in out:
        sys.exit("bench-rsp: the gdb run would not start in vtice-work:\n" + out[-2000:])
    gdb_insns, gdb_steps, gdb_time = gdb_step_count(
        port, os.path.join(tempfile.mkdtemp(prefix="vtice-bench-"), "step.py"))
    floor = raw_step_round_trip(port) * step_steps
    cold = whole_vtice(binary, port, runs, cache=False)
    warm = whole_vtice(binary, port, runs, cache=True)
    script = os.path.join(tempfile.mkdtemp(prefix="vtice-bench-"), "step.py")
    with open(script, "w") as f:
        f.write(GDB_STEP_COUNT)
    gdb_whole = whole_gdb(port, kallsyms(os.environ["VTICE_QEMU_KALLSYMS"])["__x64_sys_openat"], script)
    print("openat path of vtice-work: %d instructions (gdb counted %d), %d single-steps incl. rep iterations"
          % (insns, gdb_insns, step_steps))
    print("  vtice trace (block stepping), best of %d: %8.3f s   (all: %s)"
          % (runs, block_best, " ".join("%.3f" % r[2] for r in block)))
    print("  vtice trace --step (every insn):      %8.3f s   %5.1fx slower than block stepping"
          % (step_time, step_time / block_best))
    print("  gdb stepi loop in Python:             %8.3f s   %5.1fx slower than block stepping"
          % (gdb_time, gdb_time / block_best))
    print("  floor, raw vCont;s round trips x %d: %8.3f s   %5.1fx slower than block stepping"
          % (step_steps, floor, floor / block_best))
    print("  goal: >= 20x faster than gdb (%s), < 0.3 s per openat path (%s)"
          % ("met" if gdb_time / block_best >= 20 else "NOT met", "met" if block_best < 0.3 else "NOT met"))
    print("whole processes (start to exit, wall), %d runs each:" % runs)
    print("  vtice attach, symbols+ORC from guest memory, trace, detach: best %.3f s, median %.3f s"
          % (cold[0], cold[len(cold) // 2]))
    print("  the same with the kernel cache of an earlier attach:      best %.3f s, median %.3f s"
          % (warm[0], warm[len(warm) // 2]))
    print("  gdb: connect, break, continue, stepi loop, detach:       %.3f s    (%.1fx vtice's median)"
          % (gdb_whole, gdb_whole / cold[len(cold) // 2]))
    print("  goal: whole vtice attach process <= 0.6 s (%s)" % ("met" if cold[len(cold) // 2] <= 0.6 else "NOT met"))


if __name__ == "__main__":
    main()
