# Runs Bochs for the rig, sourced by run.sh. Only one Bochs may run on this
# machine at a time (it saturates a core), so runs queue on a lock file.

BOCHS_LOCK=${VTICE_BOCHS_LOCK:-/tmp/vtice-bochs.lock}

# Waits for Bochs instances started outside this script (other rigs do not
# take the lock). Gives up after the wall-clock budget.
wait_for_other_bochs() {
	local limit=$1 waited=0
	while pgrep -x bochs-bin >/dev/null || pgrep -x bochs >/dev/null; do
		((waited == 0)) && echo "run.sh: another Bochs is running, waiting" >&2
		((waited >= limit)) && { echo "run.sh: error: another Bochs still running after ${limit}s" >&2; exit 1; }
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

# Wall-clock seconds at which each scenario ended, for the figures: Bochs
# shares the machine, so these vary with load; guest uptimes do not.
note_scenario_times() {
	local out=$1 start=$2 now=$3 s
	for s in $(tr -d '\r' < "$out/serial.log" | sed -n 's/.*VTICE-SCENARIO \([a-z]*\) END.*/\1/p'); do
		grep -q "^$s " "$out/scenario-times" 2>/dev/null || echo "$s $((now - start))" >> "$out/scenario-times"
	done
}

run_bochs() {
	local out=$1 limit=$2 pid start now finished_at=0 init_at=0
	exec 9>"$BOCHS_LOCK"
	flock -w 1200 9 || { echo "run.sh: error: Bochs lock $BOCHS_LOCK busy for 20 min" >&2; exit 1; }
	wait_for_other_bochs 600
	: > "$out/serial.log"
	rm -f "$out/scenario-times"
	echo "run.sh: booting in Bochs (limit ${limit}s), serial log $out/serial.log" >&2
	start=$(date +%s)
	(cd "$out" && exec "$BOCHS_BIN" -q -f "$out/bochsrc" -rc "$out/bochs.cmd" \
		</dev/null >"$out/bochs.out" 2>&1) &
	pid=$!
	trap 'kill -TERM $pid 2>/dev/null || true' EXIT
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		now=$(date +%s)
		if ((init_at == 0)) && grep -q VTICE-BOOT "$out/serial.log"; then
			init_at=$now
			echo "$((now - start))" > "$out/wall-to-init"
			echo "run.sh: guest reached /init after $((now - start))s" >&2
		fi
		note_scenario_times "$out" "$start" "$now"
		if ((finished_at == 0)) && guest_finished "$out/serial.log"; then
			finished_at=$now
		fi
		# The guest sleeps 1 s after VTICE-DONE and powers off; a panic
		# never powers off. Either way allow a few seconds to drain.
		if ((finished_at && now - finished_at >= 5)); then
			kill -TERM "$pid" 2>/dev/null || true
			break
		fi
		if ((now - start >= limit)); then
			echo "run.sh: Bochs timed out after ${limit}s" >&2
			echo "$limit" > "$out/timed-out"
			kill -TERM "$pid" 2>/dev/null || true
			break
		fi
	done
	wait "$pid" 2>/dev/null || true
	trap - EXIT
	exec 9>&-
	echo "run.sh: Bochs ran $(($(date +%s) - start))s" >&2
	echo "$(($(date +%s) - start))" > "$out/wall-seconds"
}
