#!/usr/bin/env bash
# Benchmark: a crash dump of the QEMU rig's panicked guest (tests/qemu/run.sh
# --panic, 512 MiB, 2 vCPUs), side by side on the same QEMU:
#   1. vtice dump -o FILE (whole process: connect, learn the kernel, dump, detach);
#   2. vtice dump --filter zero, free, and zero,free;
#   3. the peer: QEMU's own dump-guest-memory (QMP, ELF, no paging).
# Prints wall time, file size and the ratios; median of N runs.
# Usage: tools/bench-dump.sh [BUILD]   (VTICE_BENCH_RUNS, default 3)
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
vtice=$build/vtice
runs=${VTICE_BENCH_RUNS:-3}
[[ -x "$vtice" ]] || { echo "bench-dump: $vtice not built" >&2; exit 1; }
dir=$(mkdir -p "$build/bench/qemu-dump" && cd "$build/bench/qemu-dump" && pwd)

export VTICE_QEMU_EXTRA="-qmp unix:$dir/qmp.sock,server=on,wait=off"
exec "$root/tests/qemu/run.sh" exec --dir "$dir" --panic --smp 2 -- \
	python3 "$root/tools/bench_dump.py" "$vtice" "$runs" "$dir/qmp.sock"
