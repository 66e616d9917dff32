#!/usr/bin/env bash
# Run one libFuzzer target for a bounded time: VTICE_FUZZ_SECONDS (default 10).
# Usage: run-fuzzer.sh BINARY WORK_CORPUS_DIR [SEED_DIR]
set -euo pipefail
bin=$1 corpus=$2 seeds=${3:-}
mkdir -p "$corpus"
dirs=("$corpus")
[[ -n "$seeds" && -d "$seeds" ]] && dirs+=("$seeds")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
exec "$bin" -max_total_time="${VTICE_FUZZ_SECONDS:-10}" -rss_limit_mb=2048 \
	-print_final_stats=1 "${dirs[@]}"
