#!/usr/bin/env bash
# Run every Google Benchmark binary under BUILD/tests/bench and keep the
# results as JSON beside the console output in BUILD/bench/.
# Usage: tools/bench.sh [BUILD]
set -euo pipefail
build=${1:-build}
out="$build/bench"
mkdir -p "$out"
shopt -s nullglob
ran=0
for bin in "$build"/tests/bench/bench_*; do
	[[ -x "$bin" && -f "$bin" ]] || continue
	name=$(basename "$bin")
	echo "== $name"
	"$bin" --benchmark_out="$out/$name.json" --benchmark_out_format=json
	ran=$((ran + 1))
done
for script in tools/bench-*.sh; do
	echo "== $(basename "$script")"
	"$script" "$build"
	ran=$((ran + 1))
done
echo "bench: $ran benchmark program(s) run; JSON in $out/"
