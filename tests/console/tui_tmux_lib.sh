# Helpers for the tmux-driven TUI tests (sourced). One private tmux server
# per test run (-L), so nothing touches a user's sessions.
TMUX_SOCKET=vtice-tui-$$
TMUX_TARGET=tui
TMUX_EXIT_FILE=

tmux() { command tmux -L "$TMUX_SOCKET" "$@"; }

# tmux_start COLS ROWS COMMAND: runs COMMAND in a detached session; its exit
# status lands in $work/exit-status.
tmux_start() {
	local cols=$1 rows=$2 cmd=$3
	TMUX_EXIT_FILE=$work/exit-status
	rm -f "$TMUX_EXIT_FILE"
	tmux -f /dev/null new-session -d -s "$TMUX_TARGET" -x "$cols" -y "$rows" \
		-e TERM=tmux-256color "$cmd; echo \$? > $TMUX_EXIT_FILE; sleep 30"
	tmux set-option -t "$TMUX_TARGET" window-size manual >/dev/null
}

tmux_stop() { tmux kill-server 2>/dev/null || true; }

tmux_keys() { tmux send-keys -t "$TMUX_TARGET" "$@"; }
tmux_text() { tmux send-keys -t "$TMUX_TARGET" -l "$1"; }
capture() { tmux capture-pane -p -t "$TMUX_TARGET"; }

fail() {
	echo "FAIL: $*"
	echo "---- screen ----"
	capture || true
	exit 1
}

# wait_for REGEX [SECONDS]: until the pane shows a line matching REGEX.
wait_for() {
	local regex=$1 limit=${2:-10} i
	for ((i = 0; i < limit * 20; i++)); do
		capture | grep -Eq -- "$regex" && return 0
		sleep 0.05
	done
	fail "timed out waiting for /$regex/"
}

wait_for_gone() {
	local regex=$1 limit=${2:-10} i
	for ((i = 0; i < limit * 20; i++)); do
		capture | grep -Eq -- "$regex" || return 0
		sleep 0.05
	done
	fail "/$regex/ still on screen"
}

# Every captured line fits the width and the command line is the last row.
assert_width() {
	local cols=$1 longest
	longest=$(capture | awk '{ if (length($0) > max) max = length($0) } END { print max + 0 }')
	((longest <= cols)) || fail "a line is $longest columns wide on a $cols-column pane"
	capture | tail -1 | grep -q '^(vtice)' || fail "the command line is not on the last row"
}

wait_exit() {
	local i
	for ((i = 0; i < 200; i++)); do
		[[ -s "$TMUX_EXIT_FILE" ]] && break
		sleep 0.05
	done
	[[ -s "$TMUX_EXIT_FILE" ]] || fail "the TUI did not exit"
	[[ "$(cat "$TMUX_EXIT_FILE")" == 0 ]] || fail "the TUI exited with status $(cat "$TMUX_EXIT_FILE")"
}
