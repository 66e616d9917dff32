#!/usr/bin/env bash
# Benchmark: capture one openat path of the QEMU rig's workload, side by side
# on the same QEMU (tests/qemu/run.sh):
#   1. vtice trace syscall openat (block stepping), best of N runs;
#   2. vtice trace --step (every instruction single-stepped through vtice);
#   3. gdb: stepi until the return, driven by gdb's Python, timed inside gdb;
#   4. the floor: raw vCont;s round trips (no register reads) x steps in the path;
#   5. whole processes: vtice attach (cold and with the kernel cache) and gdb.
# Prints the ratios. Usage: tools/bench-rsp.sh [BUILD]   (needs gdb and QEMU)
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
vtice=$build/vtice
runs=${VTICE_BENCH_RUNS:-5}
[[ -x "$vtice" ]] || { echo "bench-rsp: $vtice not built" >&2; exit 1; }
command -v gdb >/dev/null || { echo "bench-rsp: gdb missing, skipped"; exit 0; }
exec "$root/tests/qemu/run.sh" exec --dir "$build/bench/qemu-rsp" -- \
	python3 "$root/tools/bench_rsp.py" "$vtice" "$runs"
