#!/usr/bin/env python3
"""The measuring half of tools/bench-replay.sh (runs under tests/qemu/run.sh exec)."""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "qemu"))
from rig import gdb_step_count, vtice as rig_vtice  # noqa: E402


def vtice_run(binary, port, args, out):
    t0 = time.perf_counter()
    run = subprocess.run([binary, "attach", "127.0.0.1:" + port, "--batch", "-", "--timeout", "600"],
                         input="trace syscall openat --comm vtice-work --quiet %s\n" % args, capture_output=True,
                         text=True, timeout=900)
    whole = time.perf_counter() - t0
    m = re.search(r"trace: (\d+) instructions .*?, (\d+) steps, .*? ([0-9.]+) s", run.stdout)
    if run.returncode != 0 or not m:
        sys.exit("bench-replay: vtice failed:\n" + run.stdout[-3000:] + run.stderr[-2000:])
    rec = re.search(r"\(([0-9.]+) bytes per step\)", run.stdout)
    size = os.path.getsize(out) if out and os.path.exists(out) else 0
    return int(m.group(1)), int(m.group(2)), float(m.group(3)), whole, float(rec.group(1)) if rec else 0.0, size


def main():
    binary, runs = sys.argv[1], int(sys.argv[2])
    port = os.environ["VTICE_QEMU_PORT"]
    vmlinux = os.path.join(os.path.dirname(os.environ["VTICE_QEMU_VMLINUX"]), "vmlinux-dbg")
    work = tempfile.mkdtemp(prefix="bench-replay-")
    out = os.path.join(work, "openat.vtrace")
    step, record = [], []
    for _ in range(runs):
        step.append(vtice_run(binary, port, "--step", None))
        record.append(vtice_run(binary, port, "--record -o " + out, out))
    # The peer: stock gdb single-stepping the next openat of the same task
    # (vtice stops there and disconnects; gdb's Python stepi loop reads the
    # registers at each stop, as a recorder must). gdb's own `record full`
    # refuses this target: QEMU's description lacks org.gnu.gdb.i386.linux,
    # which gdb's amd64 process record needs.
    gdb = []
    for _ in range(runs):
        rig_vtice(binary, port, ["break __x64_sys_openat", "continue", "delete", "disconnect"], timeout=600)
        insns, steps, seconds = gdb_step_count(port, os.path.join(work, "count.py"))
        gdb.append((insns, steps, seconds))

    def med(rows, i):
        return statistics.median(r[i] for r in rows)

    s_us = med(step, 2) / med(step, 1) * 1e6
    r_us = med(record, 2) / med(record, 1) * 1e6
    print("openat of vtice-work on QEMU TCG, median of %d runs:" % runs)
    print("  vtice --step:   %6d instructions, %6d steps, %.2f s  (%.0f us per step); whole process %.2f s" % (
        med(step, 0), med(step, 1), med(step, 2), s_us, med(step, 3)))
    print("  vtice --record: %6d instructions, %6d steps, %.2f s  (%.0f us per step); whole process %.2f s; "
          "%.1f bytes per step, file %d bytes (%.1f per instruction)" % (
              med(record, 0), med(record, 1), med(record, 2), r_us, med(record, 3), med(record, 4),
              med(record, 5), med(record, 5) / med(record, 0)))
    print("  recording costs x%.2f the plain single-step" % (r_us / s_us))
    g_us = med(gdb, 2) / med(gdb, 1) * 1e6
    print("  gdb stepi loop (peer): %6d instructions, %6d steps, %.2f s (%.0f us per step)" % (
        med(gdb, 0), med(gdb, 1), med(gdb, 2), g_us))
    print("  vtice --record per step / gdb stepi per step: x%.2f" % (r_us / g_us))


if __name__ == "__main__":
    main()
