#!/bin/sh
# After a failed ctest run: each failed test's own output, its failing
# lines first, at the end of the log. A CI log is often kept only in part
# (its head and tail), and ctest prints a failed test's output where the
# test ended, anywhere in the middle.
# usage: tests/failure-digest.sh BUILD_DIR [LINES]
build=${1:?usage: tests/failure-digest.sh BUILD_DIR [LINES]}
lines=${2:-20}
failed=$build/Testing/Temporary/LastTestsFailed.log
log=$build/Testing/Temporary/LastTest.log
[ -s "$failed" ] && [ -r "$log" ] || exit 0
echo
echo "=== digest of the failed tests (from $log) ==="
cut -d: -f2- "$failed" | while read -r name; do
	echo "--- $name"
	# The test's output: from its "Output:" rule to "<end of output>".
	awk -v name="$name" '
		$0 ~ "^[0-9]+/[0-9]+ Test: " && $3 == name { mine = 1; next }
		mine && /^----------+$/ { out = 1; next }
		mine && out && /^<end of output>$/ { exit }
		mine && out { print }
	' "$log" >"${TMPDIR:-/tmp}/digest.$$"
	grep -E 'FAIL|rror|Timeout|timed out' "${TMPDIR:-/tmp}/digest.$$" | head -n "$lines"
	echo "  (last $lines lines:)"
	tail -n "$lines" "${TMPDIR:-/tmp}/digest.$$" | sed 's/^/  /'
	rm -f "${TMPDIR:-/tmp}/digest.$$"
done
