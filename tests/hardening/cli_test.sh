#!/usr/bin/env bash
# Bad input to the command-line tools: each case must end with a clear
# message and the exit code it names, never an abort, a hang or unbounded
# memory, and must leave its inputs as they were.
# Usage: cli_test.sh VTICE TRACE_FIXTURE [KERNEL_DIR (tools/kernel.sh's output)]
set -uo pipefail
vtice=$1 fixture=$2
vmlinux=$(ls "${3:-/nonexistent}"/*/vmlinux 2>/dev/null | head -n1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 cases=0

# expect NAME WANT_RC WANT_TEXT -- COMMAND...: runs COMMAND with a 60 s
# bound and 1 GiB of address space, checks its exit code and that stderr
# or stdout says WANT_TEXT.
expect() {
	local name=$1 want_rc=$2 want_text=$3 rc out
	shift 4
	cases=$((cases + 1))
	out=$( (ulimit -v 1048576; timeout 60 "$@") 2>&1 )
	rc=$?
	if [[ $rc == "$want_rc" && "$out" == *"$want_text"* ]]; then
		echo "PASS $name (exit $rc)"
	else
		echo "FAIL $name: exit $rc (want $want_rc), output: ${out:0:300}"
		failures=$((failures + 1))
	fi
}

unchanged() {
	local name=$1 file=$2 copy=$3
	cases=$((cases + 1))
	if cmp -s "$file" "$copy"; then
		echo "PASS $name"
	else
		echo "FAIL $name: $file changed"
		failures=$((failures + 1))
	fi
}

# Inputs that are not files.
expect syms-directory 1 "is a directory" -- "$vtice" syms "$work"
expect syms-dev-zero 1 "and still going" -- "$vtice" syms /dev/zero
mkfifo "$work/fifo"
(printf 'ffffffff81000000 T _text\n' > "$work/fifo") &
expect syms-fifo 0 "_text -> 0xffffffff81000000" -- "$vtice" syms "$work/fifo" _text
expect report-directory 1 "" -- "$vtice" report "$work"
expect report-dev-zero 1 "" -- "$vtice" report /dev/zero

# A source cut short is an error unless --partial says a part will do.
printf 'ffffffff81000000 T _text\nffffffff81000100 T foo\nffffffff810002' > "$work/cut.map"
expect syms-cut-map 1 "line 3 is cut short" -- "$vtice" syms "$work/cut.map" foo
expect syms-cut-map-partial 0 "foo -> 0xffffffff81000100" -- "$vtice" syms "$work/cut.map" foo --partial

# Numbers wider than the machine's.
expect syms-address-too-long 1 "longer than 64 bits" -- "$vtice" syms "$work/cut.map" --partial 0x12345678901234567890
expect syms-slide-too-long 2 "not a hexadecimal number" -- "$vtice" syms "$work/cut.map" --slide 0x1ffffffffffffffff

# Targets: gdb's forms parse; a port outside 1..65535 is refused, not wrapped.
expect attach-port-too-big 2 "not a number in 1..65535" -- "$vtice" attach localhost:99999 --batch /dev/null
expect attach-port-zero 2 "not a number in 1..65535" -- "$vtice" attach localhost:0 --batch /dev/null
expect attach-tcp-form 1 "cannot connect to localhost:1" -- "$vtice" attach tcp:localhost:1 --batch /dev/null
expect attach-ipv6-form 1 "cannot connect to ::1:1" -- "$vtice" attach '[::1]:1' --batch /dev/null

# Outputs never destroy inputs; a failed write is a failure.
cp "$fixture" "$work/t.vtrace"
cp "$fixture" "$work/t.copy"
expect report-over-its-input 2 "refusing to write over it" -- "$vtice" report "$work/t.vtrace" -o "$work/t.vtrace"
unchanged report-input-kept "$work/t.vtrace" "$work/t.copy"
ln "$work/t.vtrace" "$work/hardlink"
expect report-over-a-hard-link 2 "refusing to write over it" -- "$vtice" report "$work/t.vtrace" -o "$work/hardlink"
unchanged report-input-kept-2 "$work/t.vtrace" "$work/t.copy"
expect report-to-directory 2 "is a directory" -- "$vtice" report "$work/t.vtrace" -o "$work"
expect report-to-dev-full 1 "failed" -- sh -c '"$0" report "$1" > /dev/full' "$vtice" "$work/t.vtrace"
expect syms-to-dev-full 1 "failed" -- sh -c '"$0" syms "$1" --partial foo > /dev/full' "$vtice" "$work/cut.map"
echo old > "$work/out.txt"
expect report-replaces-output 0 "" -- "$vtice" report "$work/t.vtrace" -o "$work/out.txt"
cases=$((cases + 1))
if [[ "$(head -c 3 "$work/out.txt")" != old && -z "$(ls "$work" | grep vtice-tmp)" ]]; then
	echo "PASS report-output-renamed-into-place"
else
	echo "FAIL report-output-renamed-into-place: $(ls "$work")"
	failures=$((failures + 1))
fi

if [[ -n "$vmlinux" && -f "$vmlinux" ]]; then
	expect syms-vmlinux-bad-then-good 1 "longer than 64 bits" -- \
		"$vtice" syms "$vmlinux" 0x123456789012345678901 do_sys_openat2
else
	echo "SKIP syms-vmlinux-bad-then-good: no vmlinux (make kernel)"
fi

# vtice replay and serve-replay: a step recording (the fuzzer's seed, a
# call and its return), files that are not one, and commands out of range.
recording=$(dirname "$0")/../fuzz/corpus/fuzz_replay_reader/call-return.vtrace
expect replay-directory 1 "is a directory" -- "$vtice" replay "$work" --batch /dev/null
expect replay-dev-zero 1 "and still going" -- "$vtice" replay /dev/zero --batch /dev/null
expect replay-plain-trace 1 "holds no step recording" -- "$vtice" replay "$fixture" --batch /dev/null
head -c 400 "$recording" > "$work/cut-recording.vtrace"
expect replay-cut-file 1 "replaying what comes before" -- "$vtice" replay "$work/cut-recording.vtrace" --batch /dev/null
printf 'stepi 999999999999\nreverse-stepi 999999999999\n' > "$work/huge.cmds"
expect replay-huge-count 0 "(start of the recording)" -- "$vtice" replay "$recording" --batch "$work/huge.cmds"
printf 'frobnicate\nwhere\n' > "$work/bad.cmds"
expect replay-unknown-command 1 "unknown command 'frobnicate'" -- "$vtice" replay "$recording" --batch "$work/bad.cmds"
expect replay-batch-dev-zero 1 "" -- "$vtice" replay "$recording" --batch /dev/zero
expect serve-replay-port 2 "a whole number from 0 to 65535" -- "$vtice" serve-replay "$recording" --port 70000
expect serve-replay-plain-trace 1 "holds no step recording" -- "$vtice" serve-replay "$fixture"

echo "hardening: $cases cases, $failures failed"
((failures == 0))
