#!/usr/bin/env bash
# Judge a Bochs rig serial log: tests/bochs/check.sh SERIAL_LOG SCENARIO|kernel|all
#
# SCENARIO is baseline, load, hostile, ring, overhead or cycles. The list of
# checks each scenario must report is kept here, on the host, so a check the
# guest never printed counts as a failure. A scenario with a host driver
# (listed in host/drivers next to the log) also needs its exit status 0.
# "kernel" fails on an oops, BUG, panic, WARNING, lockup or stall that the
# kernel logged after the baseline (the stock boot's own fpu/xstate WARNING
# comes before it).
# Exit: 0 all passed, 1 a failure, 77 skipped (reason printed).
set -uo pipefail

log=${1:-}
what=${2:-all}
if [[ -z "$log" || "$log" == -h || "$log" == --help ]]; then
	sed -n '2,12s/^# \{0,1\}//p' "$0"
	exit 2
fi
dir=$(dirname "$log")

# Expected checks per scenario; @CPU@ expands to each CPU of the guest.
expected() {
	case "$1" in
	baseline) echo baseline.cpuid baseline.vmcall baseline.msr baseline.getpid ;;
	load) echo load.insmod load.status load.hv-status load.hv-status-cpu load.hv-caps load.hv-denied load.cpuid load.cpuinfo \
		load.workload-cpu@CPU@ load.interrupts load.status-after ;;
	hostile) echo hostile.vmcall hostile.devnode hostile.msr hostile.fuzz \
		hostile.status-after-fuzz ;;
	ring) echo ring.order ring.overflow ;;
	overhead) echo overhead.getpid ;;
	cycles) echo cycles.loop cycles.stress-cpu@CPU@ ;;
	# tests/hypervisor/bochs-scenarios.sh (kept in step with that file)
	hvhotplug) echo hv.hotplug-offline hv.hotplug-online hv.hotplug-cycles hv.hotplug-ring.order \
		hv.hotplug-ring.overflow hv.hotplug-load-while-offline hv.hotplug-stub ;;
	hvrollback) echo hv.rollback-cpu1-vmcall hv.rollback-cpu1-cpuid \
		hv.rollback-cpu0-vmcall hv.rollback-cpu0-cpuid hv.bad-param ;;
	hvreboot) echo hv.reboot ;;
	hvstub) echo hv.stub-text hv.stub-jiffies hv.stub-uts hv.stub-load hv.stub-hidden \
		hv.stub-detached hv.stub-hvbreak hv.stub-nostub hv.stub-noport hv.stub-wait \
		hv.bench-none hv.bench-bp1 hv.bench-bp100 hv.bench-watch1 hv.bench-watch100 \
		hv.bench-detached hv.stub-detect hv.stub-detect-kcore hv.transparency-alias hv.transparency-stub hv.transparency-user-stub hv.stub-idle-qos \
		hv.stub-idle-qos-gone ;;
	hvshield) echo hv.shield-off-getpid hv.shield-probe-control hv.shield-load hv.shield-getpid hv.shield-cost \
		hv.shield-probe hv.shield-after-attack hv.shield-ring.order hv.shield-ring.overflow hv.shield-ring-trap \
		hv.shield-stress-cpu@CPU@ hv.shield-unload hv.shield-bare-vmcall \
		hv.shield-guard-text hv.shield-stub-load hv.shield-guard hv.shield-stub-status hv.shield-stub-unload \
		hv.shield-tables hv.shield-tables-status hv.shield-tables-ring.order hv.shield-tables-ring.overflow \
		hv.shield-tables-stress-cpu@CPU@ hv.shield-tables-unload ;;
	hvdetect) echo hv.detect-state hv.detect-cpuid-timing ;;
	hvinit) echo hv.init-bare hv.init-loaded hv.init ;;
	hvstealth) echo hv.stealth-uts hv.stealth-openat hv.stealth-control hv.stealth-load hv.stealth-modules \
		hv.stealth-kallsyms hv.stealth-sysfs hv.stealth-dev hv.stealth-hotplug hv.stealth-iomem \
		hv.stealth-dyndbg hv.stealth-dmesg hv.stealth-idle-qos hv.stealth-text hv.stealth-key-control hv.stealth-key hv.stealth-refused hv.stealth-cpu-hotplug hv.stealth-loop \
		hv.stealth-dmesg-after hv.stealth-reloaded hv.stealth-unloaded hv.transparency-stealth ;;
	hvtsc) echo hv.tsc-uts hv.tsc-off hv.tsc-off-timers hv.tsc-on hv.tsc-on-timers hv.tsc-hidden ;;
	# tests/transparency/bochs-scenarios.sh
	hvstepped) echo hv.transparency-stepped hv.transparency-stepped-trace hv.transparency-on-stepped \
		hv.transparency-on-stepped-trace ;;
	# The states "bare" and "unloaded" only with TRANSPARENCY_SELF_CHECKS=1 (the long run).
	hvtransparency) echo hv.transparency-debug-events hv.transparency-nmi hv.transparency-iret hv.transparency-smc hv.transparency-user-iret hv.transparency-loaded hv.transparency-path-armed \
		hv.transparency-syscalls-armed hv.transparency-user-loaded hv.transparency-user-path-armed hv.transparency-user-syscalls-armed ;;
	hvrefused) echo hv.refused-insmod hv.refused-named hv.refused-bare ;;
	hvdoctorrefused) echo hv.doctorrefused-vmx hv.doctorrefused-rest hv.doctor ;;
	hvsyscalls) echo hv.syscalls hv.syscalls-cost hv.syscalls-busy hv.syscalls-killed hv.syscalls-bad-strings hv.syscalls-chosen ;;
	hvprofile) echo hv.profile hv.profile-spin hv.profile-module-stack hv.profile-idle hv.profile-probe hv.profile-filter hv.profile-comm hv.profile-stack hv.profile-busy hv.profile-unseen hv.profile-cost ;;
	hvprobe) echo hv.probe hv.probe-fn hv.probe-minmax hv.probe-hist hv.probe-lhist hv.probe-chosen hv.probe-stealth hv.probe-filter hv.probe-lost hv.probe-cost hv.probe-latency hv.probe-refused hv.probe-kstack hv.probe-str hv.probe-sysargs hv.probe-ret hv.probe-addr hv.probe-watch hv.probe-fetch hv.probe-module hv.probe-smc hv.probe-keys hv.probe-keys-full hv.probe-keys-func hv.probe-keys-read hv.probe-keys-unreadable hv.probe-tail ;;
	hvrootrecord) echo hv.rootrecord hv.rootrecord-interrupt hv.rootrecord-interrupted ;;
	hvpath) echo hv.path-ftrace hv.path-loop hv.path hv.path-report hv.path-after ;;
	hvpathtf) echo hv.pathtf-ftrace hv.pathtf-openat hv.pathtf-mechanism hv.pathtf-timers hv.pathtf-stealth \
		hv.pathtf hv.pathtf-sleep-nap hv.pathtf-sleep hv.pathtf-kill hv.pathtf-loop hv.pathtf-after ;;
	# tests/bochs/bochs-scenarios.sh; the host driver judges the bytes
	com2) echo com2.echo com2.recv com2.session ;;
	com2gdb) echo com2gdb.wire ;;
	*) return 1 ;;	# any other: every check it prints must pass
	esac
}

# The marker a scenario prints when it cannot run at all.
scenario_marker() {
	case "$1" in
	hvhotplug | hvrollback | hvreboot) echo "hv.${1#hv}" ;;
	*) echo "$1" ;;
	esac
}

# Kernel log lines a scenario must cause, anywhere after it began (the
# reboot notifier runs at poweroff, after VTICE-DONE).
expected_log() {
	case "$1" in
	hvreboot) echo "vtice: devirtualized all CPUs for reboot" ;;
	hvinit) echo "vtice: cpu 1 did not answer within 1000 ms" ;;
	esac
}

KERNEL_TROUBLE='Missing ENDBR|Unexpected #CP|Oops|BUG:|Kernel panic|WARNING:|general protection fault|unable to handle|invalid opcode:|double fault|soft lockup|hard LOCKUP|rcu_.*(stall|detected)|Call Trace:|kernel BUG|refcount_t:|list_(add|del) corruption'

fail_reasons=()
skip_reasons=()
note_fail() { fail_reasons+=("$*"); echo "  FAIL $*"; }
note_skip() { skip_reasons+=("$*"); echo "  SKIP $*"; }

# The log without carriage returns (the guest console writes CRLF), read
# once: "tr < log | grep -q" would fail under pipefail when grep quits early.
clean_log() { printf '%s\n' "$LOG_TEXT"; }

# Lines of one scenario's block, BEGIN to END (or to the end of the log).
scenario_block() {
	clean_log | awk -v s="$1" '
		$0 ~ "VTICE-SCENARIO " s " BEGIN" { on = 1 }
		on { print }
		$0 ~ "VTICE-SCENARIO " s " END" { exit }'
}

guest_cpus() {
	clean_log | sed -n 's/.*VTICE-BOOT .*cpus=\([0-9]*\).*/\1/p' | head -n1
}

hang_hint() {
	if grep -q VTICE-DONE <<<"$LOG_TEXT"; then
		echo "the guest did not run it (not in --scenarios?)"
	elif [[ -f "$dir/timed-out" ]]; then
		echo "hang: Bochs was stopped, $(<"$dir/timed-out")"
	else
		echo "the log ends inside it (crash or early poweroff)"
	fi
}

# After a hang, the stub's line: what the host sent last and whether the
# guest answered (a packet the stub refused with '-', a 'c' that never got
# the machine going, a break-in with no stop reply) is often the whole story.
com2_tail_after_hang() {
	local trace=$dir/com2.trace
	[[ -f "$dir/timed-out" && -s "$trace" ]] || return 0
	echo "      last traffic on COM2 (seconds since the relay started; Bochs stopped after $(cat "$dir/wall-seconds" 2>/dev/null || echo ?) s):"
	tail -n 8 "$trace" | cut -c1-160 | sed 's/^/        /'
}

# A machine stopped by the hypervisor's debugger for longer than ~20 s makes
# the kernel's soft-lockup and RCU-stall detectors report the stopped time
# when it resumes (docs/hypervisor-debugging.md, "Limits"). So does a path
# trace, which steps every CPU while the call runs (docs/tracing.md,
# "Limits"): in Bochs a stepped instruction costs thousands of cycles, and
# a CPU's interrupts wait up to trace_event_gap steps, so a runnable kthread
# can wait 20 s of guest time for the tick that would switch to it (an
# hvpathtf run of 2026-12-02: "rcu_preempt kthread starved for 2998
# jiffies" while CPU 0 stepped vtice's own reader). In a run where the stub
# was loaded or a path trace ran, those report headers are listed as notes,
# and the stack dumps they print ("Call Trace:") are not trouble by
# themselves; every other kind of trouble (BUG, WARNING, Oops, panic...)
# still fails.
DEBUG_STOP_REPORT='watchdog: BUG: soft lockup|rcu: INFO: rcu_[a-z]+ (self-)?detected stall'

# The stub's own scenarios say it loaded (hvstub; hvtfstep's line names the port).
stub_was_loaded() { grep -qE 'debug stub on port|VTICE-TEST hv\.stub-load PASS' <<<"$LOG_TEXT"; }

# A local path trace stepped every CPU (vtice trace syscall's scenarios, and doctor's traces).
every_cpu_was_stepped() { grep -qE '^VTICE-SCENARIO (hvpath[a-z]*|hvdoctor) BEGIN' <<<"$LOG_TEXT"; }

# hvinit gives CPU 1 to real-mode code while the kernel still counts it
# online: timers queued on CPU 1 never fire, so RCU's grace-period kthread
# starves and the kernel reports a stall (in a run of 2026-12-02, 17 s of
# guest time into the poweroff that follows). A soft lockup stays trouble:
# vtice's reboot notifier once waited there for CPU 1 forever.
CPU_LOST_REPORT='rcu: INFO: rcu_[a-z]+ (self-)?detected stall'

a_cpu_was_lost() { grep -qE '^VTICE-SCENARIO hvinit BEGIN' <<<"$LOG_TEXT"; }

# After vtice's reboot notifier went on without the lost CPU, the kernel's
# own reboot notifiers may wait for it with no bound: perf_reboot() ->
# perf_event_exit_cpu_context() -> smp_call_function_single(wait) to CPU 1
# (a run of 2026-12-02 at console level 7: "soft lockup - CPU#0 stuck for
# 52s! [poweroff:185]", RIP in smp_call_function_single), as it would on
# bare metal with a CPU given away. Whether the detector speaks before
# run.sh stops Bochs (5 s of wall time after VTICE-DONE) depends on the
# machine's speed. A soft lockup before vtice's line is still trouble: the
# notifier waited.
LOST_CPU_NOTIFIER_LINE='vtice: cpu [0-9]+ did not answer within'
LOST_CPU_SHUTDOWN_REPORT='watchdog: BUG: soft lockup'

# Of the lines $2, the soft-lockup reports after vtice's notifier gave up on
# the lost CPU ($1 = reports), or every other line ($1 = rest).
split_lost_cpu_wait() {
	awk -v want="$1" -v gone="$LOST_CPU_NOTIFIER_LINE" -v report="$LOST_CPU_SHUTDOWN_REPORT" '
		$0 ~ gone { after = 1 }
		{ hit = after && $0 ~ report }
		(want == "reports") == hit' <<<"$2"
}

# The lines of $2 that match $1, each with the RIP line of the report it
# heads (a soft lockup's says where the CPU was stuck), which the kernel
# prints within a few lines (the modules list can come first).
report_headers() {
	awk -v header="$1" '
		$0 ~ header { print; want = 40; next }
		want && /RIP: / { print "  " $0; want = 0; next }
		want { want-- }' <<<"$2"
}

check_kernel_lines() {
	local where=$1 block=$2 trouble notes pattern=$KERNEL_TROUBLE excused= why=
	if stub_was_loaded || every_cpu_was_stepped; then
		excused=$DEBUG_STOP_REPORT why="the time the machine lost to a debugger's stop or to stepping"
	elif a_cpu_was_lost; then
		excused=$CPU_LOST_REPORT why="the CPU the kernel lost to the INIT test"
		notes=$(split_lost_cpu_wait reports "$block" | sed 's/^VTICE-DMESG //' | head -n 5)
		[[ -n "$notes" ]] && echo "  NOTE the kernel's own wait for the lost CPU, after vtice's notifier went on:" &&
			sed 's/^/      /' <<<"$notes"
		block=$(split_lost_cpu_wait rest "$block")
	fi
	if [[ -n "$excused" ]]; then
		# (a line the console printed and dmesg's copy of it: once)
		notes=$(report_headers "$excused" "$block" | sed 's/^\( *\)VTICE-DMESG /\1/' | awk '!seen[$0]++' | head -n 10)
		[[ -n "$notes" ]] && echo "  NOTE reports of $why:" && sed 's/^/      /' <<<"$notes"
		block=$(grep -vE "$excused" <<<"$block")
		pattern=${pattern//|Call Trace:/}
	fi
	trouble=$(grep -E "$pattern" <<<"$block" | head -n 5)
	[[ -z "$trouble" ]] && return 0
	note_fail "kernel trouble in $where:"
	sed 's/^/      /' <<<"$trouble"
	return 1
}

# One check's marker: prints its outcome and details.
check_marker() {
	local name=$1 block=$2 line outcome
	line=$(grep -o "VTICE-TEST $name \(PASS\|FAIL\|SKIP\).*" <<<"$block" | tail -n1)
	if [[ -z "$line" ]]; then
		note_fail "$name: no marker in the log"
		return
	fi
	outcome=$(cut -d' ' -f3 <<<"$line")
	line=$(cut -d' ' -f4- <<<"$line")
	case "$outcome" in
	PASS) echo "  PASS $name $line" ;;
	SKIP) note_skip "$name: $line" ;;
	*) note_fail "$name: $line" ;;
	esac
}

check_scenario() {
	local s=$1 block names cpus name whole marker
	echo "scenario $s"
	block=$(scenario_block "$s")
	if [[ -z "$block" ]]; then
		note_fail "$s never started: $(hang_hint)"
		return
	fi
	if ! grep -q "VTICE-SCENARIO $s END" <<<"$block"; then
		note_fail "$s did not finish: $(hang_hint); last lines:"
		tail -n 15 <<<"$block" | sed 's/^/      /'
		com2_tail_after_hang
	fi
	[[ "$s" != baseline ]] && check_kernel_lines "$s" "$block"
	marker=$(scenario_marker "$s")
	whole=$(grep -o "VTICE-TEST $marker SKIP.*" <<<"$block" | head -n1)
	if [[ -n "$whole" ]]; then
		note_skip "$s: ${whole#VTICE-TEST $marker SKIP }"
		return
	fi
	cpus=$(guest_cpus)
	names=$(expected "$s") || names=$(grep -o 'VTICE-TEST [^ ]*' <<<"$block" | cut -d' ' -f2 | sort -u)
	[[ -z "$names" ]] && note_fail "$s: printed no check at all"
	for name in $names; do
		if [[ "$name" == *@CPU@* ]]; then
			for ((c = 0; c < ${cpus:-1}; c++)); do
				check_marker "${name//@CPU@/$c}" "$block"
			done
		else
			check_marker "$name" "$block"
		fi
	done
	# A failure the list does not name (printed only when things go wrong).
	for name in $(grep -o 'VTICE-TEST [^ ]* FAIL' <<<"$block" | cut -d' ' -f2 | sort -u); do
		tr ' ' '\n' <<<"$names" | grep -qxF -- "$name" || check_marker "$name" "$block"
	done
	check_expected_log "$s"
	check_host_driver "$s"
}

# A scenario that declared a host driver (run.sh lists them in host/drivers)
# passes only if that program ran and exited 0 (tests/bochs/lib/host.sh).
check_host_driver() {
	local s=$1 decl rc
	decl=$(grep -m1 "^$s " "$dir/host/drivers" 2>/dev/null) || return 0
	decl=${decl#"$s "}
	if [[ ! -f "$dir/host/$s.rc" ]]; then
		note_fail "$s: host driver never ran (the guest never printed VTICE-HOST $s START?): $decl"
		return
	fi
	rc=$(<"$dir/host/$s.rc")
	if [[ "$rc" == 0 ]]; then
		echo "  PASS host driver $(basename "${decl%% *}") exited 0"
		return
	fi
	note_fail "$s: host driver $(basename "${decl%% *}"): exit $rc; its first failures and last lines (host/$s.log):"
	# The first failure is the cause; the later ones often only follow from it.
	grep -m 3 -E '^CHECK [^ ]+ FAIL' "$dir/host/$s.log" 2>/dev/null | cut -c1-400 | sed 's/^/      /'
	echo "      ..."
	tail -n 8 "$dir/host/$s.log" 2>/dev/null | sed 's/^/      /'
}

check_expected_log() {
	local s=$1 want after
	want=$(expected_log "$s")
	[[ -z "$want" ]] && return
	# The kernel's lines only: a marker may quote what it expects.
	after=$(clean_log | awk -v s="$s" '$0 ~ "VTICE-SCENARIO " s " BEGIN" { on = 1 } on' | grep -v '^VTICE-')
	if grep -qF -- "$want" <<<"$after"; then
		echo "  PASS kernel said: $want"
	else
		note_fail "$s: the kernel never logged '$want'"
	fi
}

# Everything the kernel said after the baseline, inside scenarios or not.
check_kernel() {
	echo "kernel log after the module first loaded"
	local after
	after=$(clean_log | awk '/VTICE-SCENARIO baseline END/ { on = 1; next } on')
	check_kernel_lines "the run" "$after" && echo "  PASS no oops/BUG/panic/WARNING/lockup"
	local unload
	unload=$(clean_log | grep -o 'VTICE-TEST unload [A-Z]*.*' | tail -n1)
	[[ -n "$unload" && "$unload" != *" PASS"* ]] && note_fail "final rmmod: ${unload#VTICE-TEST unload }"
	if ! grep -q VTICE-DONE <<<"$LOG_TEXT"; then
		note_fail "no VTICE-DONE: $(hang_hint)"
	fi
}

print_figures() {
	local figures
	figures=$(clean_log | grep -o 'VTICE-FIGURE [^ ]*' | sed 's/VTICE-FIGURE /  /')
	# Figures the host drivers measured (tests/bochs/lib/host.sh).
	figures+=$'\n'$(cat "$dir"/host/*.log 2>/dev/null | grep -o '^VTICE-FIGURE [^ ]*' | sed 's/VTICE-FIGURE /  /')
	figures+=$(clean_log | awk '
		match($0, /VTICE-SCENARIO [a-z0-9_]+ (BEGIN|END) uptime=[0-9.]+/) {
			split(substr($0, RSTART, RLENGTH), f, /[ =]/)
			if (f[3] == "BEGIN") begin[f[2]] = f[5]
			else if (f[2] in begin) printf "\n  guest_s_%s=%.1f", f[2], f[5] - begin[f[2]]
		}')
	[[ -f "$dir/wall-to-init" ]] && figures+=$'\n'"  wall_to_init_s=$(<"$dir/wall-to-init")"
	[[ -f "$dir/wall-seconds" ]] && figures+=$'\n'"  wall_total_s=$(<"$dir/wall-seconds")"
	[[ -f "$dir/scenario-times" ]] && figures+=$'\n'"$(sed 's/^\([a-z0-9_]*\) /  wall_at_end_of_\1_s=/' "$dir/scenario-times")"
	figures=$(sed '/^$/d' <<<"$figures")
	[[ -n "$figures" ]] && { echo "figures"; echo "$figures"; }
}

if [[ -f "$dir/skipped" ]]; then
	echo "SKIP: $(<"$dir/skipped")"
	exit 77
fi
if [[ ! -s "$log" ]]; then
	echo "FAIL: $log is missing or empty (did tests/bochs/run.sh run?)"
	exit 1
fi
LOG_TEXT=$(tr -d '\r' < "$log" | tr -c '[:print:]\t\n' '?')
if ! grep -q VTICE-BOOT <<<"$LOG_TEXT"; then
	echo "FAIL: the guest never reached /init: $(hang_hint); last lines:"
	clean_log | tail -n 20 | sed 's/^/    /'
	exit 1
fi

case "$what" in
all)
	for s in $(clean_log | sed -n 's/.*VTICE-SCENARIO \([a-z0-9_]*\) BEGIN.*/\1/p'); do
		check_scenario "$s"
	done
	check_kernel
	print_figures
	;;
kernel) check_kernel ;;
*)
	check_scenario "$what"
	;;
esac

if ((${#fail_reasons[@]})); then
	echo "RESULT: FAIL (${#fail_reasons[@]} failed, ${#skip_reasons[@]} skipped)"
	exit 1
fi
if ((${#skip_reasons[@]})); then
	echo "RESULT: SKIP (${#skip_reasons[@]} skipped)"
	exit 77
fi
echo "RESULT: PASS"
exit 0
