#!/usr/bin/env bash
# The real curses path without a target: tui_fake_screen (the TUI over the
# scripted model) runs in a tmux pane; we send the keys a SoftICE/gdb-TUI
# user presses and check, from the model's call log and the screen, that
# each arrived as its action. Skips (77) without tmux.
#
# usage: tui_keys_tmux.sh TUI_FAKE_SCREEN WORKDIR
set -euo pipefail
screen_bin=$1
work=$2
command -v tmux >/dev/null || { echo "SKIP: tmux is not installed"; exit 77; }
mkdir -p "$work"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/tui_tmux_lib.sh"

log=$work/keys.log
rm -f "$log"
tmux_start 100 30 "$screen_bin $log"
trap tmux_stop EXIT

wait_for '\(vtice\)'
# F1 shows the help pane, Esc closes it.
tmux_keys F1
wait_for 'F5 +continue'
tmux_keys Escape
wait_for '^ registers'
# Run control by function key; Shift-F11 as xterm sends it (S-F11).
tmux_keys F8;  wait_for 'stopped: step'
# Backwards as xterm sends Shift-F8, Shift-F10, Shift-F5, Shift-F12 (F20,
# F22, F17, F24).
tmux_keys S-F8; wait_for 'stopped: step back'
tmux_keys S-F10 S-F5 S-F12
tmux_keys F10
tmux_keys F12
tmux_keys S-F11
# F6 to the code, Down twice, F9: a breakpoint at the third visible row.
tmux_keys F6 Down Down F9
wait_for '^B'
# F5 runs to it; then F5 again runs for ever and Ctrl-C stops it.
tmux_keys F5; wait_for 'stopped: breakpoint'
tmux_keys F5; wait_for 'running'
tmux_keys C-c; wait_for 'stopped: interrupted'
# Tab on the empty command line cycles panes: focus shows as [title].
tmux_keys F6 Tab; wait_for '\[disassembly'
# Resize: the pane must relayout to the new width (no right column < 70).
tmux resize-window -t "$TMUX_TARGET" -x 60 -y 20
wait_for_gone '\| backtrace'
assert_width 60
tmux resize-window -t "$TMUX_TARGET" -x 100 -y 30
wait_for '\| backtrace'
# q in a pane quits.
tmux_keys q
wait_exit

expected="step-into reverse-step-into reverse-step-over reverse-continue reverse-step-out step-over step-out step-out toggle continue continue interrupt"
actual=$(grep -v '^registers$' "$log" | sed 's/ 0x.*//' | tr '\n' ' ' | sed 's/ $//')
if [[ "$actual" != "$expected" ]]; then
	echo "FAIL: engine calls were '$actual', expected '$expected'"
	exit 1
fi
echo "PASS: keys through tmux reached the dispatcher: $actual"
