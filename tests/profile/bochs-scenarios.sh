# vtice profile in the Bochs rig (docs/profile.md), with the module's
# default parameters: a test module spinning in a known function on the
# last CPU must own its CPU's samples; a reader of /dev/zero must show the
# read(2) path of the kernel's source (entry code, ksys_read, then
# vfs_read) in its unwound stacks; a second profiler is refused.

# Samples of the folded file $1 whose stack matches the awk regex $2.
profile_samples_matching() {
	awk -v re="$2" '{ n = $NF; sub(/ [0-9]+$/, ""); if ($0 ~ re) s += n } END { print s + 0 }' "$1"
}

# Column $2 (samples, kernel, user, idle) of CPU $3's row in report $1.
profile_cpu_column() {
	awk -v col="$2" -v cpu="$3" '$1 == cpu && NF == 6 { print $col + 0; exit }' "$1" | tr -d '%'
}

# Waits until the profiler writing stderr to $1 has armed (at most 120 s).
profile_wait_armed() { profile_wait_line sampling "$1"; }

# Waits up to 120 s for a line with $1 in the file $2.
profile_wait_line() {
	local i
	for i in $(seq 120); do
		grep -q "$1" "$2" 2>/dev/null && return 0
		sleep 1
	done
	return 1
}

# Runs the rest of the line (a profiler writing stdout to $3.txt and
# stderr to $3.err) while vtice_spin spins 5 s on the last CPU. $1: when
# vtice_spin loads: "before" the profiler starts, or "after" it armed (its
# text is then named only once the profiler has read kallsyms again, which
# it does when the module list changes); $2: the test, failed if the
# profiler never armed or never read kallsyms again. False then.
spin_under() {
	local load=$1 test=$2 out=$3 profiler
	shift 3
	if [ "$load" = before ]; then
		insmod /lib/vtice/vtice_spin.ko secs=5 || { result $test FAIL "insmod vtice_spin failed"; return 1; }
	fi
	"$@" >$out.txt 2>$out.err &
	profiler=$!
	if ! profile_wait_armed $out.err; then
		[ "$load" = before ] && echo 1 >/sys/module/vtice_spin/parameters/go && rmmod vtice_spin
		kill $profiler
		result $test FAIL "never armed: $(tail -n 1 $out.err)"
		return 1
	fi
	if [ "$load" = after ]; then
		insmod /lib/vtice/vtice_spin.ko secs=5 || { kill $profiler; result $test FAIL "insmod vtice_spin failed"; return 1; }
		if ! profile_wait_line "read again" $out.err; then
			echo 1 >/sys/module/vtice_spin/parameters/go
			rmmod vtice_spin
			kill $profiler
			result $test FAIL "kallsyms not read again after vtice_spin loaded: $(tail -n 1 $out.err)"
			return 1
		fi
	fi
	echo 1 >/sys/module/vtice_spin/parameters/go
	rmmod vtice_spin	# waits for the spinner to end
	kill -INT $profiler
	wait $profiler
	echo "VTICE-PROFILE exit $? $(dmesg | grep -o 'vtice_spin: .*' | tail -n 1)"
	sed "s/^/VTICE-PROFILE $test: /" $out.err $out.txt | head -n 24
}

# While the spinner's thread runs (its comm, vtice-spin), its CPU must be
# in vtice_spin_loop or what it calls (ktime_get) but for its interrupts.
# $1: when vtice_spin loads (spin_under); $2: the CPU, $3: the test, $4:
# the files' base; the rest: the profiler, which writes
# "comm;root;...;leaf count" lines to $4.folded.
profile_spin() {
	local load=$1 cpu=$2 test=$3 out=$4 total spun
	shift 4
	spin_under $load $test $out "$@" || return
	total=$(profile_samples_matching $out.folded '^vtice-spin;')
	spun=$(profile_samples_matching $out.folded '^vtice-spin;.*vtice_spin_loop(;|$)')
	echo "VTICE-FIGURE $test.spin_samples=$spun"
	echo "VTICE-FIGURE $test.spinner_samples=$total"
	if [ "$total" -ge 300 ] && [ $((spun * 10)) -ge $((total * 9)) ]; then
		result $test PASS "$spun of the spinner's $total samples on CPU $cpu in vtice_spin_loop"
	else
		result $test FAIL "$spun of the spinner's $total samples on CPU $cpu in vtice_spin_loop (want >= 90% of >= 300)"
	fi
}

# Profiles narrowed to one comm: root records only that task's samples
# (docs/probes.md, docs/profile.md), so every sample the console gets is
# the spinner's, none of the other CPU's (idle, the shell), and the
# spinner still gets its >= 300 of 5 s at 99 Hz. A probe whose predicate
# names the comm, then vtice profile --comm.
profile_filtered() {
	local out=/tmp/profile-filter events spin all
	if spin_under before hv.profile-filter $out \
		vtice probe 'profile:hz:99 /comm == "vtice-spin"/ { @spin = count(); }' --duration 120 -o $out.json; then
		spin=$(grep '"name":"@spin"' $out.json | sed -n 's/.*"value":\([0-9]*\).*/\1/p')
		events=$(grep '"type":"summary"' $out.json | sed -n 's/.*"events":\([0-9]*\).*/\1/p')
		echo "VTICE-FIGURE hv.profile-filter.spinner_samples=${spin:-0}"
		echo "VTICE-FIGURE hv.profile-filter.samples_recorded=${events:-0}"
		if [ "${spin:-0}" -ge 300 ] && [ "${events:-0}" = "$spin" ] &&
			grep -q 'recorded for comm vtice-spin only' $out.err; then
			result hv.profile-filter PASS "root recorded $events samples, all the spinner's (comm vtice-spin)"
		else
			result hv.profile-filter FAIL "root recorded ${events:-no} samples, ${spin:-no} of them the spinner's (want all, >= 300)"
		fi
	fi
	out=/tmp/profile-comm
	spin_under before hv.profile-comm $out vtice profile --comm vtice-spin --duration 120 -o $out.folded || return
	all=$(profile_samples_matching $out.folded '.')
	spin=$(profile_samples_matching $out.folded '^vtice-spin;')
	echo "VTICE-FIGURE hv.profile-comm.samples=$all"
	if [ "$spin" -ge 300 ] && [ "$all" = "$spin" ] && grep -q 'recording comm vtice-spin;' $out.err; then
		result hv.profile-comm PASS "vtice profile --comm vtice-spin: $all samples, all the spinner's"
	else
		result hv.profile-comm FAIL "vtice profile --comm vtice-spin: $all samples, $spin of them the spinner's (want all, >= 300)"
	fi
}

# The spinner's stacks unwound through the module's own text with its ORC
# tables (console/module_orc.hpp) to the kthread that runs it, as the
# module's source calls: kthread -> vtice_spin_thread -> vtice_spin_loop.
profile_module_stack() {
	local folded=/tmp/profile-spin.folded spun whole
	spun=$(profile_samples_matching $folded '^vtice-spin;.*vtice_spin_loop(;|$)')
	whole=$(profile_samples_matching $folded '^vtice-spin;.*;kthread;vtice_spin_thread;vtice_spin_loop(;|$)')
	grep '^vtice-spin;' $folded | sort -t' ' -k2 -n -r | head -n 2 | sed 's/^/VTICE-PROFILE module: /'
	echo "VTICE-FIGURE hv.profile-module-stack.whole=$whole"
	if [ "$spun" -ge 300 ] && [ $((whole * 10)) -ge $((spun * 9)) ]; then
		result hv.profile-module-stack PASS "$whole of the $spun samples in vtice_spin_loop unwound through vtice_spin_thread to kthread"
	else
		result hv.profile-module-stack FAIL "$whole of the $spun samples in vtice_spin_loop unwound through vtice_spin_thread to kthread (want >= 90% of >= 300)"
	fi
}

# CPU 0 ran the shell and the profiler's reads meanwhile: mostly idle.
profile_idle() {
	local idle
	idle=$(profile_cpu_column /tmp/profile-spin.txt 5 0)
	if [ "${idle%.*}" -ge 50 ]; then
		result hv.profile-idle PASS "CPU 0 idle in $idle% of its samples"
	else
		result hv.profile-idle FAIL "CPU 0 idle in ${idle:-no}% of its samples (want >= 50%)"
	fi
}

profile_read_path() {
	local out=/tmp/profile-read dd_pid dd_kernel full
	dd if=/dev/zero of=/dev/null bs=65536 count=100000000 2>/dev/null &
	dd_pid=$!
	vtice profile --hz 99 --duration 4 -o $out.folded >$out.txt 2>$out.err
	kill $dd_pid
	wait $dd_pid 2>/dev/null
	dd_kernel=$(profile_samples_matching $out.folded '^dd;[^[]')
	full=$(profile_samples_matching $out.folded '^dd;entry_SYSCALL_64[a-z_]*;.*;ksys_read;(.*;)?vfs_read(;|$)')
	grep '^dd;' $out.folded | sort -t' ' -k2 -n -r | head -n 3 | sed 's/^/VTICE-PROFILE read: /'
	echo "VTICE-FIGURE hv.profile.read_kernel_samples=$dd_kernel"
	echo "VTICE-FIGURE hv.profile.read_full_stacks=$full"
	if [ "$dd_kernel" -ge 20 ] && [ $((full * 2)) -ge "$dd_kernel" ]; then
		result hv.profile-stack PASS "$full of dd's $dd_kernel kernel samples unwound from the entry code through ksys_read to vfs_read"
	else
		result hv.profile-stack FAIL "$full of dd's $dd_kernel kernel samples unwound through ksys_read to vfs_read (want >= half of >= 20)"
	fi
}

profile_busy() {
	local first
	vtice profile --hz 10 --duration 30 >/dev/null 2>/tmp/profile-first.err &
	first=$!
	sleep 3
	if vtice profile --duration 1 >/dev/null 2>/tmp/profile-second.err; then
		result hv.profile-busy FAIL "a second profiler ran beside the first"
	elif grep -q "owns the profiler" /tmp/profile-second.err; then
		result hv.profile-busy PASS "$(tail -n 1 /tmp/profile-second.err)"
	else
		result hv.profile-busy FAIL "$(tail -n 1 /tmp/profile-second.err)"
	fi
	kill -INT $first
	wait $first
}

# /proc/interrupts line $1 (NMI, LOC, PMI), summed over the CPUs (0 without it).
interrupts_total() {
	awk -v line="$1:" '$1 == line { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; exit } END { print s + 0 }' \
		/proc/interrupts
}

# The kernel's own interrupt counts NMI, LOC, PMI over $1 seconds, as one
# line "nmi loc pmi", while whatever runs.
interrupts_over() {
	local nmi loc pmi
	nmi=$(interrupts_total NMI) loc=$(interrupts_total LOC) pmi=$(interrupts_total PMI)
	sleep "$1"
	echo "$(($(interrupts_total NMI) - nmi)) $(($(interrupts_total LOC) - loc)) $(($(interrupts_total PMI) - pmi))"
}

# Starts vtice profile at $1 Hz in the background (its pid in the caller's
# $profiler), its stderr to $2; when it never arms, fails test $3 and
# returns 1.
profile_start() {
	vtice profile --hz $1 --duration 600 >/dev/null 2>$2 &
	profiler=$!
	profile_wait_armed $2 && return 0
	kill $profiler
	result $3 FAIL "never armed at $1 Hz: $(tail -n 1 $2)"
	return 1
}

# The samples come from the VMX-preemption timer, in root: the kernel's own
# interrupt counts (its NMI watchdog's NMIs, its perf PMIs, its local timer)
# must not see them. Over the same idle seconds with the profiler at 999 Hz
# on every CPU and without: no NMI or PMI more, and not a tenth of the
# samples as local-timer interrupts more (an APIC-timer sampler would add
# one per sample).
profile_unseen() {
	local secs=4 hz=999 profiler quiet busy watchdog samples
	watchdog=$(cat /proc/sys/kernel/nmi_watchdog 2>/dev/null || echo absent)
	quiet=$(interrupts_over $secs)
	profile_start $hz /tmp/profile-unseen.err hv.profile-unseen || return
	busy=$(interrupts_over $secs)
	kill -INT $profiler
	wait $profiler
	samples=$((hz * secs * $(nproc)))
	set -- $quiet $busy
	echo "VTICE-FIGURE hv.profile-unseen.nmi_watchdog=$watchdog"
	echo "VTICE-FIGURE hv.profile-unseen.loc_quiet=$2"
	echo "VTICE-FIGURE hv.profile-unseen.loc_sampled=$5"
	if [ "$4" -le "$1" ] && [ "$6" -le "$3" ] && [ $(($5 - $2)) -lt $((samples / 10)) ]; then
		result hv.profile-unseen PASS "over ${secs} s, without and with ~$samples samples: NMI $1 and $4, PMI $3 and $6, LOC $2 and $5 (nmi_watchdog=$watchdog)"
	else
		result hv.profile-unseen FAIL "over ${secs} s, without and with ~$samples samples: NMI $1 and $4, PMI $3 and $6, LOC $2 and $5: the kernel counted the sampling"
	fi
}

# getpid's ns per call (the client's figure) of a run named $1.
profile_getpid_ns() {
	$T getpid "$1" 300000 | tee /dev/console | sed -n "s/.*VTICE-FIGURE $1.ns_per_call=\([0-9.]*\).*/\1/p"
}

# What sampling costs the kernel: getpid's time per call with the profiler
# at 99 and 999 Hz on every CPU against none, none measured before and
# after (the lower is the base: Bochs's own timing noise only adds), and
# the VM exits the profiler adds per second (guest time: in Bochs it counts
# emulated instructions, so an exit costs what Bochs makes it cost).
profile_cost() {
	local base again hz with profiler ratio ratio_99= ratio_999=
	base=$(profile_getpid_ns hv.profile-cost-none)
	for hz in 99 999; do
		profile_start $hz /tmp/profile-cost.err hv.profile-cost || return
		eval "with_$hz=\$(profile_getpid_ns hv.profile-cost-${hz}hz)"
		kill -INT $profiler
		wait $profiler
	done
	again=$(profile_getpid_ns hv.profile-cost-none-again)
	base=$(awk -v a="$base" -v b="$again" 'BEGIN { print (b > 0 && (a <= 0 || b < a)) ? b : a }')
	for hz in 99 999; do
		eval "with=\$with_$hz"
		ratio=$(awk -v a="$with" -v b="$base" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b }')
		echo "VTICE-FIGURE hv.profile.cost_ratio_${hz}hz=$ratio"
		eval "ratio_$hz=$ratio"
	done
	if [ -n "$ratio_99" ] && [ -n "$ratio_999" ]; then
		result hv.profile-cost PASS "getpid ns per call against none ($base ns): x$ratio_99 at 99 Hz, x$ratio_999 at 999 Hz"
	else
		result hv.profile-cost FAIL "no getpid figure (base '$base')"
	fi
}

scenario_hvprofile() {
	local cpu=$(($(nproc) - 1))
	vtice_at_defaults || { result hv.profile FAIL "insmod failed"; return; }
	profile_spin before $cpu hv.profile-spin /tmp/profile-spin \
		vtice profile --hz 99 --duration 120 -o /tmp/profile-spin.folded
	profile_module_stack
	profile_idle
	# The same through a probe program: profile:hz:N keyed by comm and
	# kstack folds to the lines vtice profile writes; the spinner loads
	# after it armed, so kstack must read kallsyms again to name it.
	profile_spin after $cpu hv.profile-probe /tmp/profile-probe \
		vtice probe 'profile:hz:99 { @[comm, kstack] = count(); }' --duration 120 --folded /tmp/profile-probe.folded
	profile_filtered
	profile_read_path
	profile_busy
	profile_unseen
	profile_cost
	rmmod_vtice
	result hv.profile PASS "the module unloaded after the profiles"
}
