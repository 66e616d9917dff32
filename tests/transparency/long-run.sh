#!/usr/bin/env bash
# make test-transparency: the differential fuzzer's long run. Scenario
# hvtransparency on each CPU model with a fresh seed: Bochs 3.0's Skylake-X
# with Debian's 6.1, and its Sapphire Rapids (CET, the newer VMX MSRs) with
# Debian's 6.12 and IBT on. Exit 0 when every state of every cell passed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/transparency
seed=${TRANSPARENCY_SEED:-$(date +%s)}
count=${TRANSPARENCY_COUNT:-1000000}
vtice=$root/build/vtice

usage() {
	cat <<EOT
usage: tests/transparency/long-run.sh [--out DIR] [--seed N] [--count N] [--vtice BIN]

Runs the transparency fuzzer (tests/transparency/README.md) in Bochs 3.0 on
corei7_skylake_x (Debian 6.1) and sapphire_rapids (CET, Debian 6.12 with
IBT), one boot each, ~10 min per cell on 2 cores.

  --out DIR    where each cell's run goes (default: build/transparency)
  --seed N     the program's seed (default: the time, printed)
  --count N    observations per state (default: 1000000)
  --vtice BIN  the vtice binary shipped into the guest (default: build/vtice)
EOT
}

while (($#)); do
	case "$1" in
	--out) out=$2; shift ;;
	--seed) seed=$2; shift ;;
	--count) count=$2; shift ;;
	--vtice) vtice=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "long-run.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
# The module takes both as an unsigned long: at most 19 digits always fit.
[[ "$seed" =~ ^[0-9]{1,19}$ && "$count" =~ ^[1-9][0-9]{0,18}$ ]] ||
	{ echo "long-run.sh: --seed and --count take whole numbers of at most 19 digits (count > 0)" >&2; exit 2; }

mkdir -p "$out"
echo "long-run.sh: seed $seed, $count observations per state"
failed=0
# Sapphire Rapids boots with no5lvl: with LA57 on, Bochs 3.0 panics in its
# SMM restore ("CR4 consistency check failed", 2026-11-27).
for cell in "skylake-6.1" "sapphire_rapids-6.12 --cpu sapphire_rapids --kernel bookworm-backports --kernel-args no5lvl"; do
	name=${cell%% *}
	args=()
	[[ "$cell" == *" "* ]] && read -r -a args <<<"${cell#* }"
	echo "long-run.sh: $name"
	if "$root/tests/bochs/run.sh" --out "$out/$name" --vtice "$vtice" --scenarios hvtransparency \
		--timeout 3600 --guest-env "TRANSPARENCY_SEED=$seed TRANSPARENCY_COUNT=$count TRANSPARENCY_SELF_CHECKS=1" "${args[@]}" \
		>"$out/$name.log" 2>&1; then
		echo "long-run.sh: $name passed"
	else
		echo "long-run.sh: $name FAILED (log: $out/$name.log)"
		failed=1
	fi
	grep -a 'VTICE-TEST hv.transparency\|VTICE-TRANSPARENCY .*: diff' "$out/$name/serial.log" 2>/dev/null |
		sed 's/^/  /' || true
done
exit $failed
