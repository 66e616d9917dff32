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

profile_spin() {
	local cpu=$1 out=/tmp/profile-spin total spun
	insmod /lib/vtice/vtice_spin.ko secs=8 || { result hv.profile-spin FAIL "insmod vtice_spin failed"; return; }
	vtice profile --hz 99 --duration 5 -o $out.folded >$out.txt 2>$out.err
	echo "VTICE-PROFILE exit $? $(tail -n 1 $out.err)"
	rmmod vtice_spin	# waits for the spinner to end
	sed 's/^/VTICE-PROFILE spin: /' $out.txt | head -n 20
	total=$(profile_cpu_column $out.txt 2 "$cpu")
	spun=$(profile_samples_matching $out.folded '^vtice-spin;.*vtice_spin_loop$')
	echo "VTICE-FIGURE hv.profile.spin_samples=$spun"
	echo "VTICE-FIGURE hv.profile.cpu${cpu}_samples=$total"
	if [ "${total:-0}" -ge 400 ] && [ $((spun * 10)) -ge $((total * 9)) ]; then
		result hv.profile-spin PASS "$spun of CPU $cpu's $total samples in vtice_spin_loop"
	else
		result hv.profile-spin FAIL "$spun of CPU $cpu's ${total:-no} samples in vtice_spin_loop (want >= 90% of >= 400)"
	fi
	# CPU 0 meanwhile ran this shell and the profiler's reads: mostly idle.
	idle=$(profile_cpu_column $out.txt 5 0)
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

scenario_hvprofile() {
	local cpu=$(($(nproc) - 1))
	[ "$loaded" = 1 ] || insmod_vtice || { result hv.profile FAIL "insmod failed"; return; }
	profile_spin $cpu
	profile_read_path
	profile_busy
	rmmod_vtice
	result hv.profile PASS "the module unloaded after three profiles"
}
