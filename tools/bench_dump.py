#!/usr/bin/env python3
"""The measuring half of tools/bench-dump.sh (runs under tests/qemu/run.sh exec)."""
import json
import os
import socket
import statistics
import subprocess
import sys
import time


def timed_vtice_dump(binary, port, path, *extra):
    t0 = time.perf_counter()
    run = subprocess.run([binary, "dump", "127.0.0.1:" + port, "-o", path, *extra],
                         capture_output=True, text=True, timeout=1200)
    elapsed = time.perf_counter() - t0
    if run.returncode != 0:
        sys.exit("bench-dump: vtice dump failed:\n" + run.stdout + run.stderr)
    size = os.path.getsize(path)
    os.unlink(path)
    return elapsed, size


class Qmp:
    """QEMU's machine protocol: one JSON object per line."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile("rw")
        self.read()  # greeting
        self.command("qmp_capabilities")

    def read(self):
        return json.loads(self.file.readline())

    def command(self, name, **arguments):
        self.file.write(json.dumps({"execute": name, "arguments": arguments}) + "\n")
        self.file.flush()
        while True:
            reply = self.read()
            if "return" in reply or "error" in reply:
                return reply

    def wait_event(self, name):
        while True:
            reply = self.read()
            if reply.get("event") == name:
                return reply


def timed_qemu_dump(qmp, path):
    t0 = time.perf_counter()
    reply = qmp.command("dump-guest-memory", paging=False, protocol="file:" + path)
    if "error" in reply:
        sys.exit("bench-dump: QEMU dump-guest-memory: %s" % reply["error"])
    elapsed = time.perf_counter() - t0
    size = os.path.getsize(path)
    os.unlink(path)
    return elapsed, size


def main():
    binary, runs, qmp_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    port = os.environ["VTICE_QEMU_PORT"]
    out = os.path.join(os.environ["VTICE_QEMU_DIR"], "bench.vmcore")
    qmp = Qmp(qmp_path)
    rows = []
    for label, measure in (
            ("vtice dump (whole process)", lambda: timed_vtice_dump(binary, port, out)),
            ("vtice dump --filter zero", lambda: timed_vtice_dump(binary, port, out, "--filter", "zero")),
            ("vtice dump --filter free", lambda: timed_vtice_dump(binary, port, out, "--filter", "free")),
            ("vtice dump --filter zero,free",
             lambda: timed_vtice_dump(binary, port, out, "--filter", "zero,free")),
            ("QEMU dump-guest-memory (peer)", lambda: timed_qemu_dump(qmp, out))):
        samples = [measure() for _ in range(runs)]
        rows.append((label, statistics.median(s[0] for s in samples), samples[0][1]))
    peer = rows[-1][1]
    print("crash dump of a panicked 512 MiB, 2-vCPU QEMU TCG guest, median of %d runs" % runs)
    print("%-32s %10s %12s %10s" % ("", "wall s", "file MiB", "x peer"))
    for label, seconds, size in rows:
        print("%-32s %10.2f %12.1f %10.2f" % (label, seconds, size / 2**20, seconds / peer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
