#!/usr/bin/env bash
# make demo: vtice on the bundled default target, Debian's kernel.
# Part "qemu", the RSP debugger on QEMU's gdbstub:
#   0. recover the kernel's symbols from the Debian vmlinuz (no System.map);
#   1. boot the Debian kernel (uncompressed vmlinux, PVH) in QEMU TCG with a
#      busybox initramfs and the vtice-work workload, gdbstub on loopback;
#   2. attach vtice in batch mode: symbols recovered from guest memory, ORC
#      tables read from it, KASLR slide from the IDT;
#   3. break on do_sys_openat2: registers, backtrace, disassembly;
#   4. trace one openat syscall of vtice-work and show its function graph;
#   5. detach, stop QEMU.
# Part "bochs", the hypervisor itself, in Bochs 3.0 (emulated VT-x with EPT;
# the Bochs scenario "demo", tests/hypervisor/bochs-scenarios.sh):
#   6. the same kernel boots, vtice.ko loads under it on every CPU;
#   7. vtice trace syscall openat runs inside the guest; its graph is set
#      against the kernel's own ftrace function_graph of the same call;
#   8. vtice attach on the host, over the guest's second serial port, sets a
#      hidden breakpoint that the guest hits, bt; the guest's /proc/kcore
#      shows the original bytes all along.
# Usage: tools/demo.sh [BUILD]; DEMO_PARTS="qemu bochs" (the default) picks.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
vtice=$build/vtice
out=$build/demo
mkdir -p "$out"
[[ -x "$vtice" ]] || { echo "demo: $vtice is not built (run make)" >&2; exit 1; }

step() { printf '\n=== demo: %s\n' "$*"; }

qemu_part() {
	local kernel_dir port
	kernel_dir=$("$root/tools/kernel.sh" "$build/kernel")
	step "kallsyms recovered from Debian's vmlinuz (it ships no System.map and no .symtab)"
	"$vtice" syms "$kernel_dir/vmlinuz" do_sys_openat2 __x64_sys_openat entry_SYSCALL_64

	step "booting the Debian kernel in QEMU TCG (gdbstub on loopback)"
	port=$("$root/tests/qemu/run.sh" start --dir "$out/qemu")
	trap '"$root/tests/qemu/run.sh" stop --dir "$out/qemu"; echo "=== demo: QEMU stopped"' EXIT
	echo "guest up: $(tr -d '\r' < "$out/qemu/serial.log" | grep -m1 VTICE-READY) (the vtice-work workload), gdbstub 127.0.0.1:$port"

	step "attaching vtice (batch mode); commands are echoed with (vtice)"
	cat > "$out/demo.cmds" <<CMDS
# stop in the openat path of whichever task opens a file next
break do_sys_openat2
continue
info task
info registers rip rsp rdi rsi rdx cr3
bt
disassemble \$rip 8
x/4xg \$rsp
delete
# the whole openat syscall of the workload, as a function graph
trace syscall openat --comm vtice-work -o $out/openat.vtrace
detach
CMDS
	"$vtice" attach "127.0.0.1:$port" --batch "$out/demo.cmds" --echo --timeout 60 2> "$out/progress.log"

	step "the trace file, read back by vtice report (first 25 lines)"
	"$vtice" report "$out/openat.vtrace" -o "$out/openat.graph"
	head -25 "$out/openat.graph"
	echo "..."
	"$root/tests/qemu/run.sh" stop --dir "$out/qemu"
	trap - EXIT
	echo "=== demo: QEMU stopped; trace in $out/openat.vtrace (graph: $out/openat.graph)"
}

# The guest console's lines that start with PREFIX, without it.
guest_lines() { tr -d '\r' < "$out/bochs/serial.log" | sed -n "s/^$1 //p"; }

bochs_part() {
	local rc=0 log=$out/bochs/host/demo.log
	step "the hypervisor: the same kernel in Bochs 3.0 (emulated VT-x with EPT), vtice.ko loaded under it"
	echo "(Bochs emulates every instruction: this part takes a few minutes, the first time"
	echo " 2 more to build Bochs 3.0 from Debian's source; the rig's progress follows)"
	"$root/tests/bochs/run.sh" --out "$out/bochs" --scenarios demo || rc=$?
	[[ -s "$out/bochs/serial.log" && -s "$log" ]] || { echo "demo: the Bochs part did not run: see $out/bochs" >&2; return 1; }
	guest_lines VTICE-TEST | sed -n 's/^demo.load [A-Z]* /guest: /p'

	step "inside the guest: vtice trace syscall openat (its header, and 30 lines from do_sys_openat2)"
	guest_lines VTICE-DEMO | awk '
		/^trace: / { next }
		/do_sys_openat2\(\)/ && !at { at = NR; print "  ..." }
		!at && (/^[#$]/ || /^[a-z]/) || at && NR < at + 30 { print }'
	echo "  ..."
	guest_lines VTICE-DEMO | grep '^trace: call 1' || true

	step "on the host: that graph against the kernel's own ftrace function_graph of the same call"
	sed -n 's/^CHECK demo-trace-vs-ftrace [A-Z]* //p' "$log"

	step "on the host: vtice attach over the guest's COM2, a hidden breakpoint the guest hits"
	sed -n '/^\$ vtice attach/,$p' "$log" | grep -v '^CHECK '

	step "the guest's own view of do_sys_openat2 through /proc/kcore: while the breakpoint was set, after detach"
	guest_lines VTICE-TEST | sed -n 's/^demo\.\(hidden\|detached\) /\1: /p'

	step "checks (host: $log; guest: $out/bochs/serial.log)"
	awk '$1 == "CHECK" { print "host  " $3 "  " $2 }' "$log"
	guest_lines VTICE-TEST | awk '$1 ~ /^demo\./ { print "guest " $2 "  " $1 }'
	return "$rc"
}

for part in ${DEMO_PARTS:-qemu bochs}; do
	"${part}_part"
done
step "done"
