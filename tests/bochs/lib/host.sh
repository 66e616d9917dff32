# Host drivers, sourced by run.sh: programs on the host that talk to the
# guest over COM2 (the debug stub's line), started when the guest asks.
#
# A scenarios file (tests/*/bochs-scenarios.sh) declares one per scenario:
#   # bochs-host-driver: SCENARIO PROGRAM [ARGS...]
# PROGRAM is relative to that file's directory. The guest calls
# start_host_driver SCENARIO (init.sh), which prints "VTICE-HOST SCENARIO
# START"; run.sh then starts PROGRAM with the environment below, its
# stdout+stderr in OUT/host/SCENARIO.log and its exit status written to
# OUT/host/SCENARIO.rc, which check.sh asserts (0 = pass).
#   VTICE_COM2        host:port of the guest's ttyS1 (gdb: target remote $VTICE_COM2)
#   VTICE_SERIAL_LOG  the guest console (COM1) as it grows
#   VTICE_RUN_DIR     OUT;  VTICE_SCENARIO  the scenario;  VTICE_ROOT  the source tree
#   VTICE_KERNEL_DIR  tools/kernel.sh's directory of the kernel the guest boots
# COM2 goes through lib/com2-relay.py: Bochs connects to it once at start-up,
# drivers connect as they come (one at a time), and guest bytes sent before
# a driver connects are kept for it (dropped if that driver fails, so they
# cannot reach the next scenario's driver). Transcript: OUT/com2.trace.

HOST_GRACE_S=20	# a driver may finish this long after Bochs stopped
HOST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

# "SCENARIO PROGRAM ARGS..." for every declaration in the files, PROGRAM
# made absolute.
host_driver_decls() {
	local f dir
	for f in "$@"; do
		dir=$(cd "$(dirname "$f")" && pwd)
		sed -n 's/^# bochs-host-driver: *//p' "$f" |
			awk -v dir="$dir" 'NF >= 2 { $2 = dir "/" $2; print }'
	done
}

# Writes OUT/host/drivers with the declarations of the scenarios this run
# executes; true if there is at least one.
host_plan() {
	local out=$1 scenarios=$2 decl name
	shift 2
	rm -rf "$out/host" "$out/com2-ports" "$out/com2.trace" "$out/com2.stats"
	mkdir -p "$out/host"
	: > "$out/host/drivers"
	while read -r decl; do
		[[ -z "$decl" ]] && continue
		name=${decl%% *}
		[[ " $scenarios " == *" $name "* ]] || continue
		[[ -x "$(cut -d' ' -f2 <<<"$decl")" ]] ||
			{ echo "run.sh: error: host driver of $name is not executable: $decl" >&2; exit 1; }
		echo "$decl" >> "$out/host/drivers"
	done < <(host_driver_decls "$@")
	[[ -s "$out/host/drivers" ]]
}

# Starts the relay (not in a subshell: its pid is needed later). Sets
# HOST_BOCHS_COM2 (where Bochs connects), HOST_DRIVER_PORT, HOST_RELAY_PID.
host_start_relay() {
	local out=$1 i
	python3 "$(dirname "${BASH_SOURCE[0]}")/com2-relay.py" "$out" \
		</dev/null >/dev/null 2>"$out/com2-relay.err" 9>&- &
	HOST_RELAY_PID=$!
	for ((i = 0; i < 100; i++)); do
		[[ -f "$out/com2-ports" ]] && break
		kill -0 "$HOST_RELAY_PID" 2>/dev/null ||
			{ cat "$out/com2-relay.err" >&2; echo "run.sh: error: the COM2 relay died" >&2; exit 1; }
		sleep 0.1
	done
	[[ -f "$out/com2-ports" ]] || { echo "run.sh: error: the COM2 relay did not start" >&2; exit 1; }
	local bochs_port
	read -r bochs_port HOST_DRIVER_PORT < "$out/com2-ports"
	HOST_BOCHS_COM2=127.0.0.1:$bochs_port
}

# When --com2 sends COM2 elsewhere, no driver can run: say so in each .rc.
host_not_started() {
	local out=$1 why=$2 name
	for name in $(cut -d' ' -f1 "$out/host/drivers"); do
		echo "not started: $why" > "$out/host/$name.rc"
	done
}

# Called once a second while Bochs runs: notes drivers that ended and starts
# the ones the guest asked for. A driver that failed may have left guest
# bytes in the relay, sent for it: they must not reach the next driver.
host_poll() {
	local out=$1 decl name
	[[ -n "${HOST_DRIVER_PORT:-}" ]] || return 0
	while read -r decl; do
		name=${decl%% *}
		if [[ -e "$out/host/$name.rc" && ! -e "$out/host/$name.ended" ]]; then
			touch "$out/host/$name.ended"
			[[ "$(<"$out/host/$name.rc")" == 0 ]] || kill -USR1 "$HOST_RELAY_PID" 2>/dev/null || true
		fi
		[[ -e "$out/host/$name.started" ]] && continue
		tr -d '\r' < "$out/serial.log" | grep -qx "VTICE-HOST $name START" || continue
		host_start_driver "$out" "$decl"
	done < "$out/host/drivers"
}

# True while a driver the guest started has not ended: a crashed guest's
# last console line must not end the run under a driver still talking to
# its stub (hvcrash dumps the panicked kernel after the panic).
host_busy() {
	local out=$1 started
	for started in "$out"/host/*.started; do
		[[ -e "$started" && ! -e "${started%.started}.rc" ]] && return 0
	done
	return 1
}

host_start_driver() {
	local out=$1 decl=$2 name argv
	read -r name argv <<<"$decl"
	mkdir -p "$out/host/$name.work"
	date +%s > "$out/host/$name.started"
	echo "run.sh: starting the host driver of $name" >&2
	(
		cd "$out/host/$name.work" || exit 1
		# Own session, so stopping it also stops what it runs (gdb).
		# shellcheck disable=SC2086 # ARGS split as declared
		VTICE_COM2=127.0.0.1:$HOST_DRIVER_PORT VTICE_SERIAL_LOG=$out/serial.log \
			VTICE_RUN_DIR=$out VTICE_SCENARIO=$name VTICE_ROOT=$HOST_ROOT \
			VTICE_KERNEL_DIR=${HOST_KERNEL_DIR:-} \
			setsid $argv </dev/null >"$out/host/$name.log" 2>&1 9>&- &
		echo $! > "$out/host/$name.pid"
		wait $!
		echo $? > "$out/host/$name.rc.tmp"
		mv "$out/host/$name.rc.tmp" "$out/host/$name.rc"
	) &
}

# After Bochs stopped: starts the drivers asked for in its last second (a
# host-judged scenario that ends the run: its START line came after the
# last poll), lets running drivers finish, stops the rest and the relay.
host_finish() {
	local out=$1 name pid waited=0
	[[ -n "${HOST_DRIVER_PORT:-}" ]] || return 0
	host_poll "$out"
	for name in $(cut -d' ' -f1 "$out/host/drivers"); do
		[[ -e "$out/host/$name.started" ]] || continue
		while [[ ! -e "$out/host/$name.rc" ]] && ((waited < HOST_GRACE_S * 10)); do
			sleep 0.1
			waited=$((waited + 1))
		done
		[[ -e "$out/host/$name.rc" ]] && continue
		pid=$(<"$out/host/$name.pid")
		kill -TERM -- "-$pid" 2>/dev/null || true
		sleep 1
		kill -KILL -- "-$pid" 2>/dev/null || true
		echo "killed: still running ${HOST_GRACE_S}s after Bochs stopped" > "$out/host/$name.rc"
	done
	kill -TERM "$HOST_RELAY_PID" 2>/dev/null || true
	wait "$HOST_RELAY_PID" 2>/dev/null || true
}

# run.sh exiting early (error, signal): nothing of ours may outlive it.
host_kill_all() {
	local out=$1 pidfile
	for pidfile in "$out"/host/*.pid; do
		[[ -f "$pidfile" ]] && kill -KILL -- "-$(<"$pidfile")" 2>/dev/null
	done
	[[ -n "${HOST_RELAY_PID:-}" ]] && kill -TERM "$HOST_RELAY_PID" 2>/dev/null
	return 0
}
