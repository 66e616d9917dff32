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
from rig import gdb_step_count, vtice as rig_vtice  # noqa: E402



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


if __name__ == "__main__":
    main()
