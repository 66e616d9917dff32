#!/usr/bin/env bash
# The debugger screen against the real target: `vtice attach` runs in a tmux
# pane against Debian's kernel in QEMU (started by tests/qemu/run.sh exec); we
# type a breakpoint on do_sys_openat2, press F5, F10, F8, F9 and F5, resize,
# Ctrl-C and q, and check the captured pane.
#
# Expected values come from outside vtice: the address of do_sys_openat2 from
# the guest's own /proc/kallsyms, and instruction boundaries from binutils'
# objdump of the same vmlinux (QEMU boots it at its link address: no KASLR).
#
# usage: tests/qemu/run.sh exec -- tui_qemu_test.sh VTICE WORKDIR [DOCSDIR]
#   DOCSDIR: also write console-screen.txt/.ansi there (docs/ screenshots)
set -euo pipefail
vtice=$1
work=$2
docs=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

[[ -n "${VTICE_QEMU_PORT:-}" ]] || { echo "SKIP: run under tests/qemu/run.sh exec"; exit 77; }
command -v tmux >/dev/null || { echo "SKIP: tmux is not installed"; exit 77; }
command -v objdump >/dev/null || { echo "SKIP: objdump (binutils) is not installed"; exit 77; }
mkdir -p "$work"
source "$here/tui_tmux_lib.sh"

# --- independent expectations -------------------------------------------
vmlinux=${VTICE_QEMU_VMLINUX:-}
[[ -f "$vmlinux" ]] || { echo "SKIP: the booted kernel's vmlinux is not there ($vmlinux)"; exit 77; }
# The serial port delivered the guest's kallsyms with CRLF line ends.
kallsyms=$work/kallsyms-lf.txt
tr -d '\r' < "$VTICE_QEMU_KALLSYMS" > "$kallsyms"
addr=$(awk '$3 == "do_sys_openat2" { print $1; exit }' "$kallsyms")
[[ -n "$addr" ]] || fail "do_sys_openat2 is not in the guest's kallsyms"
# Instruction starts: objdump lines "addr:<TAB>bytes<TAB>mnemonic"; lines
# without a mnemonic continue a long instruction.
mapfile -t insns < <(objdump -d --start-address=0x$addr --stop-address=$(printf '0x%x' $((0x$addr + 48))) \
	"$vmlinux" | awk -F'\t' '/^ *ffffffff[0-9a-f]+:/ && NF >= 3 && $3 != "" { sub(/:$/, "", $1); gsub(/ /, "", $1); print $1 "\t" $3 }')
((${#insns[@]} >= 4)) || fail "objdump gave ${#insns[@]} instructions at $addr"
a1=${insns[1]%%$'\t'*}
a2=${insns[2]%%$'\t'*}
a3=${insns[3]%%$'\t'*}
op1=${insns[1]#*$'\t'}
echo "do_sys_openat2 = $addr; next instructions $a1 ($op1), $a2, $a3"

register() {  # register NAME: its value on the captured screen
	capture | grep -oE "(^| )$1 +[0-9a-f]{16}" | awk 'NR == 1 { print $2 }'
}

# --- the session -------------------------------------------------------
# TMPDIR: where the screen puts the trace file of a `trace` without -o.
tmux_start 120 40 "TMPDIR=$work $vtice attach 127.0.0.1:$VTICE_QEMU_PORT --symbols $kallsyms"
trap tmux_stop EXIT
wait_for '^ vtice .*\[stopped' 60
wait_for '^\(vtice\)'

tmux_text "break do_sys_openat2"
tmux_keys Enter
wait_for "Breakpoint 1 at 0x$addr <do_sys_openat2>"
tmux_keys F5
wait_for "\[stopped: Breakpoint 1 at 0x$addr <do_sys_openat2>\]" 30
capture > "$work/at-breakpoint.txt"
grep -q "B>$addr  <do_sys_openat2>" "$work/at-breakpoint.txt" || fail "disassembly does not mark RIP at do_sys_openat2"
[[ "$(register rip)" == "$addr" ]] || fail "rip shows $(register rip), kallsyms says $addr"
grep -qE "#0  $addr  do_sys_openat2" "$work/at-breakpoint.txt" || fail "backtrace frame 0 is not do_sys_openat2"
grep -qE "[|]1 +sw +y +1 $addr  do_sys_open" "$work/at-breakpoint.txt" || fail "breakpoints pane lacks the hit breakpoint"

# F10 steps over the first instruction (ftrace's call/nop), F8 steps into the next.
tmux_keys F10
wait_for "\[stopped: Stopped at 0x$a1 <do_sys_openat2\+0x" 15
[[ "$(register rip)" == "$a1" ]] || fail "after F10 rip is $(register rip), objdump says $a1"
rsp_before=$(register rsp)
tmux_keys F8
wait_for "\[stopped: Stopped at 0x$a2 <do_sys_openat2\+0x" 15
[[ "$(register rip)" == "$a2" ]] || fail "after F8 rip is $(register rip), objdump says $a2"
grep -q " >$a2  <do_sys_openat2+0x" <(capture) || fail "disassembly does not follow RIP to $a2"
# QEMU's gdbstub cannot run backwards: Shift-F8 says so and moves nothing.
tmux_keys S-F8
wait_for 'this target cannot run backwards' 15
[[ "$(register rip)" == "$a2" ]] || fail "after a refused Shift-F8 rip is $(register rip), not $a2"
if [[ "$op1" == push* ]]; then
	# A push lowers rsp by 8: the register pane must show it, highlighted.
	want=$(printf '%016x' $((0x$rsp_before - 8)))
	[[ "$(register rsp)" == "$want" ]] || fail "after '$op1' rsp is $(register rsp), expected $want"
fi
ansi=$(tmux capture-pane -e -p -t "$TMUX_TARGET")
grep -qP "\e\[[0-9;]*31m$a2" <<<"$ansi" || fail "the changed rip is not highlighted"
grep -qP "cr3(\e\[[0-9;]*m)? +[0-9a-f]{16}" <<<"$ansi" && ! grep -qP "cr3(\e\[[0-9;]*m)? +\e\[[0-9;]*31m" <<<"$ansi" ||
	fail "cr3 did not change in one step but is highlighted (or missing)"

# Screenshots: text with a header, and the ANSI capture.
{
	echo "# vtice attach (TUI) on Debian $(basename "$(dirname "$vmlinux")") in QEMU TCG, 120x40,"
	echo "# after 'break do_sys_openat2', F5, F10, F8. Captured by tests/console/tui_qemu_test.sh"
	echo "# (tmux capture-pane -p); console-screen.ansi has the colours (capture-pane -e)."
	capture
} > "$work/console-screen.txt"
printf '%s\n' "$ansi" > "$work/console-screen.ansi"

# F6 to the code, Down to the next instruction, F9 sets a breakpoint there;
# F5 runs to it.
tmux_keys F6 Down F9
wait_for "[|]2 +sw +y +0 $a3  "
grep -q "^B $a3  <do_sys_openat2+0x" <(capture) || fail "disassembly does not mark the F9 breakpoint at $a3"
tmux_keys F5
wait_for "\[stopped: Breakpoint 2 at 0x$a3 <do_sys_openat2\+0x" 15
[[ "$(register rip)" == "$a3" ]] || fail "F5 to the F9 breakpoint left rip at $(register rip), objdump says $a3"
tmux_keys F6

# Help pane lists the keys.
tmux_keys F1
wait_for 'F12, Shift-F11 +step out'
tmux_keys Escape
wait_for '^ registers'

# Resize to 80x24 and back: relayout, nothing wider than the pane.
tmux resize-window -t "$TMUX_TARGET" -x 80 -y 24
wait_for_gone '^ fs_base'
assert_width 80
[[ "$(register rip)" == "$a3" ]] || fail "rip is not shown after shrinking to 80x24"
capture > "$work/screen-80x24.txt"
tmux resize-window -t "$TMUX_TARGET" -x 120 -y 40
wait_for '^fs_base'
assert_width 120

# Ctrl-C interrupts a running target.
tmux_text "delete"
tmux_keys Enter
tmux_keys F5
wait_for '\[running\]'
tmux_keys C-c
wait_for '\[stopped: Interrupted at 0x' 15

# The engine's trace of one openat by vtice-work opens in the trace pane
# (btf-trace decodes the file it wrote). The calls expected are fs/open.c's:
# __x64_sys_openat -> do_sys_openat2 -> getname, do_filp_open.
tmux_text "trace syscall openat --comm vtice-work"
tmux_keys Enter
wait_for '\[trace  \(vtice-tui-[0-9]+-1\.vtrace, ' 180
tmux_keys F2
wait_for '^\[trace'
capture > "$work/trace.txt"
grep -qE '[|] +__x64_sys_openat\(\) \{' "$work/trace.txt" || fail "trace pane lacks __x64_sys_openat"
# Rows of the pane start below its title (screen row 1); the cursor is on the first.
row=$(grep -nE '[|] +do_sys_openat2\(\) \{' "$work/trace.txt" | head -1 | cut -d: -f1) || true
[[ -n "$row" ]] || fail "trace pane lacks do_sys_openat2"
for ((i = 3; i < row; i++)); do tmux_keys Down; done
# Enter toggles the fold of do_sys_openat2: open, its calls appear; again, they go.
if grep -qE 'do_sys_openat2\(\) \{\.\.\.\}' "$work/trace.txt"; then
	tmux_keys Enter
fi
wait_for '[|] +getname\(\)'
wait_for '[|] +do_filp_open\(\)'
{
	echo "# vtice attach (TUI): 'trace syscall openat --comm vtice-work', trace pane zoomed (F2),"
	echo "# do_sys_openat2 unfolded with Enter. Captured by tests/console/tui_qemu_test.sh."
	capture
} > "$work/console-trace.txt"
tmux_keys Enter
wait_for 'do_sys_openat2\(\) \{\.\.\.\}'
capture | grep -qE '[|] +getname\(\)' && fail "getname still shown inside the folded do_sys_openat2"
tmux_keys F2

# Tab to a pane, q quits (and detaches: vtice exits 0).
tmux_keys F6
wait_for '\[disassembly'
tmux_keys q
wait_exit

if [[ -n "$docs" ]]; then
	cp "$work/console-screen.txt" "$work/console-screen.ansi" "$work/console-trace.txt" "$docs/"
	echo "screenshots written to $docs"
fi
echo "PASS: breakpoint, F5/F10/F8, F9+F5, registers, help, resize, Ctrl-C, trace pane and q on the real target"
