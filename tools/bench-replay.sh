#!/usr/bin/env bash
# Benchmark: recording one openat path of the QEMU rig's workload for
# replay, side by side on the same QEMU (tests/qemu/run.sh):
#   1. vtice trace syscall openat --step    (single-steps only; the floor)
#   2. vtice trace syscall openat --record  (the same steps, plus registers
#      and the memory each step reads and writes)
#   3. the peer: stock gdb single-stepping the same path from its Python
#      (gdb's own `record full` refuses a QEMU kernel target: no
#      org.gnu.gdb.i386.linux feature in the target description).
# Prints per-step costs, bytes per step and the ratios.
# Usage: tools/bench-replay.sh [BUILD]   (needs gdb and QEMU)
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
vtice=$build/vtice
runs=${VTICE_BENCH_RUNS:-3}
[[ -x "$vtice" ]] || { echo "bench-replay: $vtice not built" >&2; exit 1; }
command -v gdb >/dev/null || { echo "bench-replay: gdb missing, skipped"; exit 0; }
exec "$root/tests/qemu/run.sh" exec --dir "$build/bench/qemu-replay" -- \
	python3 "$root/tools/bench_replay.py" "$vtice" "$runs"
