#!/bin/busybox sh
# /init of the Bochs rig's initramfs. Runs the scenarios named in
# /etc/vtice-scenarios and prints markers on the serial console that
# tests/bochs/check.sh parses:
#   VTICE-BOOT, VTICE-SCENARIO <name> BEGIN|END, VTICE-TEST <name> PASS|FAIL|SKIP,
#   VTICE-FIGURE <name>=<value>, VTICE-DMESG <kernel line>, VTICE-DONE.
# A check that cannot run prints SKIP with the reason, never PASS.

/bin/busybox mkdir -p /usr/bin /sbin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

echo "VTICE-BOOT uptime=$(cut -d' ' -f1 /proc/uptime) cpus=$(nproc)"
echo "VTICE-FIGURE boot_to_init_s=$(cut -d' ' -f1 /proc/uptime)"

KO=/lib/vtice/vtice.ko
T=vtice-test
dmesg_mark=0
loaded=0

result() { echo "VTICE-TEST $1 $2 $3"; }

# Asks run.sh to start the host program this scenario declared with a
# "# bochs-host-driver:" line (tests/bochs/lib/host.sh); it talks to the
# guest over COM2 (/dev/ttyS1) and may start a little after this line.
start_host_driver() { echo "VTICE-HOST $1 START"; }

# Runs "$@" and, while it runs, says on the console every 30 s of guest
# time that the guest is alive: run.sh's stall watch counts wall time, and
# on a loaded machine a command that prints nothing for a minute of guest
# time stays silent for several. "$@" keeps the redirections its caller gave.
# The beat runs on CPU 0 alone: vtice's tracers step a task on the last CPU
# (vtice doctor's choice, and the scenarios'), and a task queued behind a
# stepped syscall there waits for minutes in Bochs, so an unpinned beat
# went silent while the guest was well. One process (the client's
# heartbeat), not a shell loop of sleeps: see tests/bochs/client/heartbeat.c.
with_heartbeat() {
	local pid beat rc
	"$@" &
	pid=$!
	taskset 1 $T heartbeat "$1 $2" >/dev/console &
	beat=$!
	wait $pid
	rc=$?
	kill $beat 2>/dev/null
	wait $beat 2>/dev/null
	return $rc
}

# A scenario that reads the kernel's lines of one step counts them first and
# reads those after the count. Never `dmesg -c`: the lines it clears would
# be missing from dmesg_delta and from the host's check for kernel trouble.
dmesg_lines() { dmesg | wc -l; }
dmesg_after() { dmesg | tail -n +$(($1 + 1)); }

# Kernel lines since the last call, so the host can judge what each scenario
# added (the stock boot already carries an fpu/xstate WARNING).
dmesg_delta() {
	local total
	total=$(dmesg_lines)
	dmesg_after "$dmesg_mark" | sed 's/^/VTICE-DMESG /'
	dmesg_mark=$total
}

# The module's parameters as /sys/module/vtice/parameters shows them.
vtice_params() {
	grep -r . /sys/module/vtice/parameters 2>/dev/null | sort
}

# Loads vtice at its defaults; the first such load keeps what they read as.
insmod_vtice() {
	if insmod "$KO" 2>/tmp/insmod.err; then
		loaded=1
		[ -s /tmp/vtice-defaults ] || vtice_params >/tmp/vtice-defaults
		return 0
	fi
	echo "insmod: $(cat /tmp/insmod.err)"
	return 1
}

# vtice loaded at its defaults: the one loaded now if it is, else a fresh
# load. A scenario that tests the defaults must not inherit the parameters
# the one before it loaded with (hvpathsmall's ring_records=64 once made
# hvprobe lose records).
vtice_at_defaults() {
	if [ "$loaded" = 1 ] && [ -s /tmp/vtice-defaults ] && vtice_params | cmp -s - /tmp/vtice-defaults; then
		return 0
	fi
	[ "$loaded" = 0 ] || rmmod_vtice
	insmod_vtice
}

rmmod_vtice() {
	rmmod vtice 2>/tmp/rmmod.err && { loaded=0; return 0; }
	echo "rmmod: $(cat /tmp/rmmod.err)"
	return 1
}

# Sum of the local timer interrupt counts of every CPU, one per line.
timer_counts() {
	awk '/^ *LOC:/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) print $i }' /proc/interrupts
}

# Runs a command with every CPU but 0 offline. Bochs's SMP loop runs one
# trace of each CPU in turn and advances the clock by their average length
# (main.cc), so a CPU's time depends on what the others run: with CPU 1
# online and mostly idle, the fastest 100 getpid calls took 325 ticks per
# call bare and 467 loaded while both loops averaged 565 (docs/bochs-rig.md).
# With the others offline, CPU 0's clock follows its own instructions.
on_cpu0_alone() {
	local cpu rc
	for cpu in /sys/devices/system/cpu/cpu[1-9]*/online; do
		echo 0 > "$cpu"
	done
	"$@"; rc=$?
	for cpu in /sys/devices/system/cpu/cpu[1-9]*/online; do
		echo 1 > "$cpu"
	done
	return $rc
}

# One stress process pinned to each CPU, in the background.
stress_all() {
	stress_pids=""
	for cpu in $(seq 0 $(($(nproc) - 1))); do
		taskset -c "$cpu" $T stress "$1-cpu$cpu" "$2" &
		stress_pids="$stress_pids $!"
	done
}

# Runs a command, shows its output, and passes NAME if it exits 0 and
# prints a line matching the extended regex PATTERN.
check_output() {
	local name=$1 pattern=$2 out rc
	shift 2
	out=$("$@" 2>&1); rc=$?
	echo "$out"
	if [ $rc = 0 ] && echo "$out" | grep -Eq "$pattern"; then
		result "$name" PASS "'$*' printed /$pattern/"
	else
		result "$name" FAIL "'$*' exited $rc or printed no /$pattern/"
	fi
}

# The vtice binary itself, as a user runs it: the table must agree with
# nproc, --cpu must pick one CPU's column, caps must show VMX, and a
# non-root user must get "root only".
check_vtice_hv() {
	local out rc n
	if [ ! -x /bin/vtice ]; then
		for c in status status-cpu caps denied; do
			result load.hv-$c SKIP "vtice binary not in the initramfs"
		done
		return
	fi
	n=$(nproc)
	check_output load.hv-status "^vtice hypervisor: $n of $n CPUs virtualized" vtice hv status
	check_output load.hv-caps '^  VMX +yes$' vtice hv caps
	# --cpu N: the table holds CPU N's column and no other.
	out=$(vtice hv status --cpu $((n - 1)) 2>&1); rc=$?
	if [ $rc = 0 ] && echo "$out" | grep -q "CPU$((n - 1))" && ! echo "$out" | grep -Eq "CPU[0-9]+ .*CPU"; then
		result load.hv-status-cpu PASS "hv status --cpu $((n - 1)) shows that CPU alone"
	else
		result load.hv-status-cpu FAIL "hv status --cpu $((n - 1)): exit $rc: $out"
	fi
	out=$(su -s /bin/sh nobody -c 'vtice hv status' 2>&1); rc=$?
	if [ $rc = 1 ] && echo "$out" | grep -q 'root only'; then
		result load.hv-denied PASS "as nobody: $out"
	else
		result load.hv-denied FAIL "as nobody: exit $rc: $out"
	fi
}

# Bare Bochs: what the kernel and a program see without the hypervisor.
scenario_baseline() {
	# Which CET features the kernel turned on (it clears the flags it does
	# not use): ibt on an IBT kernel on a CET CPU model (run.sh --cpu tigerlake).
	echo "VTICE-FIGURE baseline.cet=$(grep -m1 '^flags' /proc/cpuinfo | grep -owE 'ibt|user_shstk' | tr '\n' ' ')"
	$T cpuid baseline.cpuid vmx
	$T vmcall baseline.vmcall
	$T msr baseline.msr readable
	base_path_ns=$(on_cpu0_alone $T getpid baseline.getpid 1000000 | tee /dev/console |
		sed -n 's/.*VTICE-TEST baseline.getpid PASS .* path_ns=\([0-9.]*\).*/\1/p')
}

scenario_load() {
	if [ "$loaded" = 0 ]; then
		if insmod_vtice; then
			result load.insmod PASS "module loaded"
		else
			result load.insmod FAIL "insmod failed"
			return
		fi
	fi
	$T status load.status
	check_vtice_hv
	$T cpuid load.cpuid cpuinfo
	local procs
	procs=$(grep -c '^processor' /proc/cpuinfo)
	if [ "$procs" = "$(nproc)" ]; then
		result load.cpuinfo PASS "processors=$procs"
	else
		result load.cpuinfo FAIL "/proc/cpuinfo lists $procs of $(nproc) cpus"
	fi
	local before after
	before=$(timer_counts | tr '\n' ' ')
	stress_all load.workload 10
	wait $stress_pids
	after=$(timer_counts | tr '\n' ' ')
	if echo "$before|$after" | awk -F'|' '{ n = split($1, b, " "); split($2, a, " ");
		for (i = 1; i <= n; i++) if (a[i] <= b[i]) exit 1; exit n == 0 }'; then
		result load.interrupts PASS "LOC before=[$before] after=[$after]"
	else
		result load.interrupts FAIL "LOC before=[$before] after=[$after]"
	fi
	$T status load.status-after
}

scenario_hostile() {
	vtice_at_defaults || { result hostile.insmod FAIL "insmod failed"; return; }
	$T vmcall hostile.vmcall
	$T devnode hostile.devnode
	$T msr hostile.msr as-bare
	$T fuzz hostile.fuzz 100000 1
	$T status hostile.status-after-fuzz
}

scenario_ring() {
	vtice_at_defaults || { result ring.insmod FAIL "insmod failed"; return; }
	$T ring ring
}

scenario_overhead() {
	vtice_at_defaults || { result overhead.insmod FAIL "insmod failed"; return; }
	if [ -z "$base_path_ns" ]; then
		result overhead.getpid FAIL "no baseline measurement"
		return
	fi
	local verdict
	verdict=$(on_cpu0_alone $T getpid overhead.getpid 1000000 "$base_path_ns" | tee /dev/console)
	case "$verdict" in
	*"overhead.getpid FAIL"*) overhead_suspects ;;
	esac
}

# After a getpid ratio above its bound with no VM exit (one CI run of
# 2026-12-02: 1.029, 16 more instructions a call in Bochs's instruction
# clock; 1.000 in two runs after): what else lengthens the syscall path,
# and the measure again, to tell a lasting cause from a passing one.
overhead_suspects() {
	local t=/sys/kernel/tracing f
	echo "VTICE-OVERHEAD kprobes: $(cat $t/kprobe_events 2>/dev/null | head -n 3 | tr '\n' ' ')"
	echo "VTICE-OVERHEAD ftrace functions: $(grep -c . $t/enabled_functions 2>/dev/null)"
	echo "VTICE-OVERHEAD events enabled: $(for f in $t/events/*/*/enable; do
		[ "$(cat "$f" 2>/dev/null)" = 1 ] && echo "${f#$t/events/}"; done | head -n 5 | tr '\n' ' ')"
	echo "VTICE-OVERHEAD shell: $(grep -E '^(Seccomp|TracerPid):' /proc/$$/status | tr '\n' ' ')"
	on_cpu0_alone $T getpid overhead.getpid-again 1000000 "$base_path_ns"
}

# Load and unload under load on every CPU; after each unload the CPUs must
# look like bare Bochs again (VMCALL #UD, CPUID.1:ECX.VMX set).
scenario_cycles() {
	[ "$loaded" = 0 ] || rmmod_vtice || { result cycles.rmmod FAIL "initial rmmod failed"; return; }
	local i=0 fail=""
	stress_all cycles.stress 0
	while [ $i -lt 20 ] && [ -z "$fail" ]; do
		i=$((i + 1))
		echo "VTICE-PROGRESS cycles $i/20"
		insmod_vtice || { fail="insmod $i"; break; }
		$T status cycles.status >/tmp/status.out || { fail="status after insmod $i"; cat /tmp/status.out; break; }
		rmmod_vtice || { fail="rmmod $i"; break; }
		$T vmcall cycles.vmcall >/tmp/vmcall.out || { fail="vmcall after rmmod $i"; cat /tmp/vmcall.out; break; }
		$T cpuid cycles.cpuid vmx >/tmp/cpuid.out || { fail="cpuid after rmmod $i"; cat /tmp/cpuid.out; break; }
	done
	kill -TERM $stress_pids
	wait $stress_pids
	if [ -n "$fail" ]; then
		result cycles.loop FAIL "failed at $fail"
	else
		result cycles.loop PASS "iterations=20 vmcall=SIGILL cpuid.vmx=1 after each rmmod"
	fi
}

run_scenario() {
	echo "VTICE-SCENARIO $1 BEGIN uptime=$(cut -d' ' -f1 /proc/uptime)"
	if ! type "scenario_$1" >/dev/null 2>&1; then
		result "$1" FAIL "no such scenario (not in init.sh or /etc/vtice-scenarios.d)"
	elif [ ! -f "$KO" ] && [ "$1" != baseline ]; then
		result "$1" SKIP "no vtice.ko in the initramfs (--module none)"
	else
		"scenario_$1"
	fi
	dmesg_delta
	echo "VTICE-SCENARIO $1 END uptime=$(cut -d' ' -f1 /proc/uptime)"
}

# Scenarios of other components (tests/*/bochs-scenarios.sh), using the
# helpers above: $T, $KO, result, insmod_vtice, rmmod_vtice, stress_all,
# start_host_driver.
# run.sh --guest-env: variables the scenario files below read.
[ -f /etc/vtice-env ] && . /etc/vtice-env
for f in /etc/vtice-scenarios.d/*.sh; do
	[ -f "$f" ] && . "$f"
done

insmod /lib/vtice/msr.ko || echo "init: msr.ko did not load"
# Keep the kernel off the console so it cannot split marker lines: an oops or
# panic still reaches it (oops_begin() raises the level), and everything else
# arrives through the VTICE-DMESG dumps after each scenario.
dmesg -n 1
dmesg_delta >/dev/null
run_scenario baseline
for s in $(cat /etc/vtice-scenarios); do
	run_scenario "$s"
done
if [ "$loaded" = 1 ]; then
	rmmod_vtice && result unload PASS "rmmod" || result unload FAIL "final rmmod failed"
fi
dmesg_delta
echo "VTICE-DONE uptime=$(cut -d' ' -f1 /proc/uptime)"
# Let the UART send what is still queued before the power goes.
$T drain console
# A scenario whose check reads the kernel's lines at poweroff (after the
# markers, so none can split them) asks for them here.
[ -n "$poweroff_console_level" ] && dmesg -n "$poweroff_console_level"
sleep 1
poweroff -f
