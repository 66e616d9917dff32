# Runs Bochs for the rig, sourced by run.sh. A Bochs saturates one core, so
# at most one per core runs at a time (VTICE_BOCHS_SLOTS to change that):
# runs queue for a slot, each slot a lock file. What a guest measures does
# not depend on the load (its clock counts instructions, bochsrc's ips);
# only the wall-clock figures (scenario-times) do.

BOCHS_LOCK=${VTICE_BOCHS_LOCK:-/tmp/vtice-bochs.lock}
BOCHS_SLOTS=${VTICE_BOCHS_SLOTS:-$(nproc)}

# Takes a free slot on descriptor 9 (lock files $BOCHS_LOCK.N), waiting at
# most $1 seconds for one.
take_bochs_slot() {
	local limit=$1 waited=0 slot
	while :; do
		for ((slot = 0; slot < BOCHS_SLOTS; slot++)); do
			exec 9>"$BOCHS_LOCK.$slot"
			flock -n 9 && return 0
			exec 9>&-
		done
		((waited == 0)) && echo "run.sh: all $BOCHS_SLOTS Bochs slots are busy, waiting" >&2
		((waited >= limit)) && { echo "run.sh: error: no Bochs slot free after ${limit}s" >&2; exit 1; }
		sleep 5
		waited=$((waited + 5))
	done
}

# Waits while the Bochs instances running on this machine, ours (each in a
# slot) and others' (no slot), fill every slot. Gives up after $1 seconds.
wait_for_other_bochs() {
	local limit=$1 waited=0
	while (($(pgrep -c -x 'bochs-bin|bochs' || true) >= BOCHS_SLOTS)); do
		((waited == 0)) && echo "run.sh: $BOCHS_SLOTS Bochs already running, waiting" >&2
		((waited >= limit)) && { echo "run.sh: error: Bochs still running on every core after ${limit}s" >&2; exit 1; }
		sleep 5
		waited=$((waited + 5))
	done
}

# True once the guest is finished: its last marker, or a panic whose
# backtrace has had time to reach the log (Bochs would spin on forever).
guest_finished() {
	local log=$1
	[[ -f "$log" ]] || return 1
	grep -q -e 'VTICE-DONE' -e 'end Kernel panic' -e 'Kernel panic - not syncing' "$log"
}

# The guest ended in a panic (the crash scenarios), not at VTICE-DONE.
guest_panicked() {
	! grep -q 'VTICE-DONE' "$1" && grep -q 'Kernel panic - not syncing' "$1"
}

# Wall-clock seconds at which each scenario ended, for the figures: Bochs
# shares the machine, so these vary with load; guest uptimes do not.
# test-times has the same for each result (VTICE-TEST), to see where a
# scenario's wall time goes.
note_scenario_times() {
	local out=$1 elapsed=$2
	note_times_of 'VTICE-SCENARIO \([a-z0-9_]*\) END' "$out/serial.log" "$out/scenario-times" "$elapsed"
	note_times_of 'VTICE-TEST \([a-z0-9_.-]*\) ' "$out/serial.log" "$out/test-times" "$elapsed"
}

# One awk a second: names whose line is in the log and not yet in times.
note_times_of() {
	local pattern=$1 log=$2 times=$3 elapsed=$4
	tr -d '\r' < "$log" | sed -n "s/.*$pattern.*/\\1/p" |
		awk -v t="$elapsed" -v times="$times" '
			BEGIN { while ((getline line < times) > 0) { split(line, f, " "); seen[f[1]] = 1 } }
			!($1 in seen) { seen[$1] = 1; print $1, t }' >> "$times"
}

stop_for_hang() {
	echo "run.sh: stopping Bochs: $2" >&2
	echo "$2" > "$1/timed-out"
}

# Bytes the guest has sent: its console, and what it sent on COM2 (the
# relay's count, com2.stats). A machine stopped in the debug stub prints
# nothing on its console while a debugger works with it, yet it is not hung:
# its stub answers (a CI run's gdb read 765 KB of branch trace and the code
# behind it for over 240 s, and the console watch took that for a hang).
guest_output_bytes() {
	local out=$1 com2=0
	[[ -f "$out/com2.stats" ]] && com2=$(sed -n 's/^guest_to_host=//p' "$out/com2.stats")
	echo $(($(stat -c %s "$out/serial.log") + ${com2:-0}))
}

# One look at the running guest (state in watch_*); false once Bochs should
# stop: the guest finished (5 s to drain: it sleeps 1 s and powers off; a
# panicked guest never does), the overall limit passed, or after /init the
# guest sent nothing for the stall limit (a hang; the scenarios print at
# least every minute or two of wall time even under load).
poll_guest() {
	local out=$1 elapsed=$2 limit=$3 stall=$4 size
	if ((watch_init == 0)) && grep -q VTICE-BOOT "$out/serial.log"; then
		watch_init=$elapsed
		echo "$elapsed" > "$out/wall-to-init"
		echo "run.sh: guest reached /init after ${elapsed}s" >&2
	fi
	note_scenario_times "$out" "$elapsed"
	host_poll "$out"
	size=$(guest_output_bytes "$out")
	if ((size != watch_size)); then
		watch_size=$size
		watch_growth=$elapsed
	fi
	if ((watch_done == 0)) && guest_finished "$out/serial.log"; then
		watch_done=$elapsed
	fi
	# A panicked guest stays up while its host driver still talks to the stub.
	if ((watch_done && elapsed - watch_done >= 5)) && ! { guest_panicked "$out/serial.log" && host_busy "$out"; }; then
		return 1
	fi
	# A host driver that judged a machine that cannot finish (a reset
	# follows) says so: stop before the guest boots again.
	[[ -e "$out/host/end-run" ]] && return 1
	if ((elapsed >= limit)); then
		stop_for_hang "$out" "still running after ${limit}s (--timeout)"
		return 1
	fi
	if ((watch_init && elapsed - watch_growth >= stall)); then
		stop_for_hang "$out" "no output on the console or COM2 for ${stall}s after /init (--stall)"
		return 1
	fi
	return 0
}

run_bochs() {
	local out=$1 limit=$2 stall=$3 pid start
	take_bochs_slot 1200
	wait_for_other_bochs 600
	: > "$out/serial.log"
	rm -f "$out/scenario-times" "$out/test-times"
	echo "run.sh: booting in Bochs (limit ${limit}s), serial log $out/serial.log" >&2
	start=$(date +%s)
	# Where the rig's instrumentation logs what the CPU did while the guest
	# has it on (tests/bochs/oracle; host drivers read it as OUT/oracle.bin).
	rm -f "$out/oracle.bin"
	(cd "$out" && VTICE_BOCHS_ORACLE=$out/oracle.bin exec "$BOCHS_BIN" -q -f "$out/bochsrc" \
		"${BOCHS_EXTRA_ARGS[@]}" </dev/null >"$out/bochs.out" 2>&1) &
	pid=$!
	trap 'kill -TERM $pid 2>/dev/null; host_kill_all "$out"' EXIT
	watch_init=0 watch_done=0 watch_size=0 watch_growth=0
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		poll_guest "$out" $(($(date +%s) - start)) "$limit" "$stall" || break
	done
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	trap - EXIT
	exec 9>&-
	echo "$(($(date +%s) - start))" > "$out/wall-seconds"
	echo "run.sh: Bochs ran $(<"$out/wall-seconds")s" >&2
}
