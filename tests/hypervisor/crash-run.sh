#!/usr/bin/env bash
# ctest bochs.crash and bochs.triple: a Bochs run of one crash scenario
# alone (hvcrash: the guest kernel panics under the stub and never powers
# off; hvtriple: it triple-faults, and resets once the debugger lets go).
# Passes when the guest armed the crash guards and the host driver
# (host/crash_rsp.py) passed every check; the shared checker's rules (a
# clean kernel log, VTICE-DONE) cannot hold for a run that ends in a crash
# by design.
# Usage: crash-run.sh OUT VTICE_BIN BOCHS_VERSION BOCHS_CACHE [SCENARIO]
set -uo pipefail
out=$1 vtice=$2 version=$3 cache=$4 scenario=${5:-hvcrash}
here=$(cd "$(dirname "$0")" && pwd)
"$here/../bochs/run.sh" --no-check --scenarios "$scenario" --out "$out" --vtice "$vtice" \
	--bochs "$version" --bochs-cache "$cache" --timeout 900 --stall 400
rc=$?
((rc == 77)) && exit 77
((rc == 0)) || { echo "crash-run: run.sh failed ($rc)"; exit 1; }
fail=0
log=$(tr -d '\r' < "$out/serial.log")
if grep -q 'VTICE-TEST hv.crash-armed PASS' <<<"$log"; then
	echo "PASS hv.crash-armed $(grep -o 'VTICE-TEST hv.crash-armed PASS.*' <<<"$log" | cut -d' ' -f4-)"
else
	echo "FAIL hv.crash-armed: $(grep -o 'VTICE-TEST hv.crash-armed.*' <<<"$log" || echo 'no marker')"
	fail=1
fi
grep '^CHECK' "$out/host/$scenario.log" 2>/dev/null
rc=$(cat "$out/host/$scenario.rc" 2>/dev/null || echo "never ran")
if [[ "$rc" != 0 ]]; then
	echo "FAIL host driver crash_rsp.py: $rc; last lines of $out/host/$scenario.log:"
	tail -n 15 "$out/host/$scenario.log" 2>/dev/null | sed 's/^/    /'
	fail=1
fi
((fail)) && { echo "RESULT: FAIL"; exit 1; }
echo "RESULT: PASS"
