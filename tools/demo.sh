#!/usr/bin/env bash
# make demo: the RSP debugger on the bundled default target.
#   0. recover the kernel's symbols from the Debian vmlinuz (no System.map);
#   1. boot the Debian kernel (uncompressed vmlinux, PVH) in QEMU TCG with a
#      busybox initramfs and the vtice-work workload, gdbstub on loopback;
#   2. attach vtice in batch mode: symbols recovered from guest memory, ORC
#      tables read from it, KASLR slide from the IDT;
#   3. break on do_sys_openat2: registers, backtrace, disassembly;
#   4. trace one openat syscall of vtice-work and show its function graph;
#   5. detach, stop QEMU.
# Usage: tools/demo.sh [BUILD]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
vtice=$build/vtice
out=$build/demo
mkdir -p "$out"
[[ -x "$vtice" ]] || { echo "demo: $vtice is not built (run make)" >&2; exit 1; }

step() { printf '\n=== demo: %s\n' "$*"; }

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
step "done: trace in $out/openat.vtrace (graph: $out/openat.graph), commands in $out/demo.cmds"
