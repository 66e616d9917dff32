#!/usr/bin/env bash
# Self-test of check.sh on hand-written serial logs (checker-cases/): each
# case names the verdict a correct checker must give. No Bochs needed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cases=$here/checker-cases
failures=0

expect() {
	local log=$1 what=$2 want=$3 got
	"$here/check.sh" "$cases/$log" "$what" >/tmp/vtice-checker-test.$$ 2>&1
	got=$?
	if [[ "$got" != "$want" ]]; then
		echo "FAIL check.sh $log $what: exit $got, expected $want"
		sed 's/^/    /' /tmp/vtice-checker-test.$$
		failures=$((failures + 1))
	else
		echo "ok   check.sh $log $what -> $got"
	fi
	rm -f /tmp/vtice-checker-test.$$
}

# check.sh's output for the case holds the line $3.
expect_line() {
	local log=$1 what=$2 line=$3
	local said
	said=$("$here/check.sh" "$cases/$log" "$what" 2>&1)
	if grep -qF -- "$line" <<<"$said"; then
		echo "ok   check.sh $log $what says: $line"
	else
		echo "FAIL check.sh $log $what does not say: $line"
		failures=$((failures + 1))
	fi
}

expect pass.log baseline 0
expect pass.log ring 0
expect pass.log kernel 0
expect pass.log all 0
expect pass.log load 1        # never started
expect warning.log ring 1
expect warning.log kernel 1
expect warning.log baseline 0 # the boot's own WARNING is not judged
expect hang.log ring 1
expect hang.log kernel 1
expect missing.log ring 1
expect skip.log ring 77
expect skip.log all 77
expect oops.log ring 1
expect oops.log all 1
# the stub's own stops: lockup/stall reports are notes, other trouble fails
expect stub-stop.log newstub 0
expect stub-stop.log kernel 0
expect_line stub-stop.log newstub "RIP: 0010:smp_call_function_many_cond+0x12e/0x500"  # where CPU 1 was stuck
expect stub-stop-oops.log newstub 1
expect stub-absent-lockup.log newstub 1
expect stepped-rcu.log hvpathcase 0     # every CPU stepped: the RCU stall report is a note
expect stepped-rcu.log kernel 0
expect stepped-warning.log hvpathcase 1 # ...and a WARNING still fails
expect unstepped-rcu.log newscenario 1  # no path trace, no stub: the stall is trouble
expect extra.log hvrollback 0
expect extra.log newthing 0
expect extra.log hvreboot 0
expect extra.log all 0
expect extra-unlisted-fail.log hvrollback 1
expect extra-bad.log newthing 1
expect extra-bad.log hvreboot 1
expect reboot-echo.log hvreboot 1   # the line quoted by a marker is not the kernel's
expect extra.log nosuch 1     # never started
# hvinit loses CPU 1: RCU's stall at poweroff is a note, the reboot notifier must say it went on
expect init-lost-cpu.log hvinit 0
expect init-lost-cpu.log kernel 0
expect init-lockup.log kernel 0       # after vtice's notifier went on: the kernel's perf_reboot waits for CPU 1
expect init-lockup.log hvinit 0
expect init-lockup-before-notifier.log kernel 1 # before its line: vtice's notifier stalled the poweroff
expect init-notifier-hung.log hvinit 1 # no "did not answer" line: the notifier waited
# host drivers (host/drivers and host/<scenario>.rc next to the log)
expect host-ok/serial.log com2 0
expect host-ok/serial.log all 0
expect host-fail/serial.log com2 1   # the driver exited 1
expect host-fail/serial.log all 1
expect host-never/serial.log com2 1  # declared, never ran
expect host-hang/serial.log com2 1   # Bochs stopped as hung inside it
expect_line host-hang/serial.log com2 '133.411609 guest>host 1 -'  # the line's last bytes: the stub refused the 'c'
expect host-never/serial.log baseline 0

# Every scenario the checker expects markers of is one a scenario file (or
# init.sh) still defines: an edit that cut scenario_NAME out would drop its
# ctest too, and the run would pass without it.
root=$(cd "$here/../.." && pwd)
defined=$(grep -ho '^scenario_[a-z0-9_]*()' "$here/init.sh" "$root"/tests/*/bochs-scenarios.sh | sed 's/^scenario_//; s/()$//')
for name in $(sed -n '/^expected() {/,/^}/s/^\t\([a-z0-9_]*\))\( .*\)\{0,1\}$/\1/p' "$here/check.sh"); do
	if grep -qx "$name" <<<"$defined"; then
		echo "ok   scenario_$name is defined"
	else
		echo "FAIL check.sh expects scenario $name, which no scenario file defines"
		failures=$((failures + 1))
	fi
done
exit $((failures > 0))
