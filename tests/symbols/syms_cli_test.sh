#!/usr/bin/env bash
# vtice syms end to end: output shape, round trips and error messages.
# Usage: syms_cli_test.sh VTICE_BINARY KERNEL_PARENT_DIR
set -uo pipefail
vtice=$1 kernels=$2
fail() { echo "FAIL: $*"; exit 1; }
# The first unpacked kernel (kernels/ holds apt state directories too).
dir=$(find "$kernels/" -mindepth 2 -maxdepth 2 -name vmlinuz -printf "%h\n" 2>/dev/null | sort | head -1)
[[ -n "$dir" && -f "$dir/vmlinuz" ]] || { echo "SKIP: no Debian kernel under $kernels"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$vtice" syms "$dir/vmlinuz" do_sys_openat2 nosuch_symbol_xyz) || fail "vmlinuz: exit $?"
echo "$out"
grep -Eq '^[0-9]{5,6} symbols from kallsyms tables in .*vmlinuz \(6\.2-style layout\)$' <<<"$out" || fail "header"
addr=$(sed -n 's/^do_sys_openat2 -> \(0x[0-9a-f]*\)$/\1/p' <<<"$out")
[[ -n "$addr" ]] || fail "no address for do_sys_openat2"
grep -q '^nosuch_symbol_xyz -> (not found)$' <<<"$out" || fail "missing symbol line"

# The address printed for the name resolves back to it, with and without a slide.
back=$("$vtice" syms "$dir/vmlinux" "$(printf '0x%x' $((addr + 0x10)))" | tail -1)
[[ "$back" == *"-> do_sys_openat2+0x10" ]] || fail "round trip: $back"
slid=$("$vtice" syms "$dir/vmlinux" --slide 0x1000000 do_sys_openat2 | tail -1)
[[ "$slid" == "do_sys_openat2 -> $(printf '0x%016x' $((addr + 0x1000000)))" ]] || fail "slide: $slid"

# Errors name the problem and exit non-zero.
err=$("$vtice" syms /nonexistent/vmlinuz 2>&1) && fail "missing file accepted"
grep -q 'No such file' <<<"$err" || fail "missing file message: $err"
echo 'ffffffffffffffff B The real System.map is in the linux-image-6.1.0-dbg package' >"$tmp/System.map"
err=$("$vtice" syms "$tmp/System.map" 2>&1) && fail "stub System.map accepted"
grep -q 'placeholder System.map' <<<"$err" || fail "stub message: $err"
head -c 4000000 "$dir/vmlinuz" >"$tmp/cut"
err=$("$vtice" syms "$tmp/cut" 2>&1) && fail "truncated vmlinuz accepted"
grep -q 'truncated' <<<"$err" || fail "truncated message: $err"
"$vtice" syms >/dev/null 2>&1; [[ $? == 2 ]] || fail "usage exit code"
"$vtice" syms --help | grep -q -- '--slide HEX' || fail "help"
echo PASS
