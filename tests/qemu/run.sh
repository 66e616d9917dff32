#!/usr/bin/env bash
# The QEMU rig: the Debian kernel (uncompressed vmlinux, PVH boot) with a
# busybox initramfs and the vtice-work workload, gdbstub on loopback.
#
# Usage:
#   tests/qemu/run.sh start [--dir DIR] [--port N] [--smp N]   boot, wait for the workload, print the port
#   tests/qemu/run.sh stop [--dir DIR]                         stop the QEMU started there
#   tests/qemu/run.sh exec [--dir DIR] [--smp N] -- CMD...     start, run CMD, always stop; CMD's exit code
#   tests/qemu/run.sh initramfs [--dir DIR]                    (re)build DIR/initramfs.cpio only
#   --image vmlinuz   boot the compressed image instead: slower, and its
#                     decompressor applies KASLR (no kallsyms dump then)
#   --gdb tcp|unix|pty  the gdbstub's transport (default tcp on loopback)
#   --ftrace          the guest records the workload's openat calls with its own
#                     ftrace function_graph before VTICE-READY (DIR/ftrace.txt)
#   --panic           after VTICE-READY the guest lists its tasks and RAM on
#                     ttyS0, then panics through sysrq and stays stopped there
#                     (panic=0); start returns once the panic is in serial.log
#
# DIR (default build/qemu) receives: initramfs.cpio, serial.log (ttyS0),
# kallsyms.txt (the guest's /proc/kallsyms via ttyS1), port, target (what to
# give vtice attach), qemu.pid. exec exports VTICE_QEMU_PORT,
# VTICE_QEMU_TARGET, VTICE_QEMU_DIR, VTICE_QEMU_KALLSYMS to CMD.
# Exit code 77 when QEMU or the kernel is missing (tests count it as skipped).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=$root/build/qemu
port=
smp=1
image=vmlinux
gdb=tcp
ftrace=
panic=
cmd=${1:-}
[[ $# -gt 0 ]] && shift

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
	case $1 in
	--dir) dir=$2; shift 2 ;;
	--port) port=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--image) image=$2; shift 2 ;;
	--gdb) gdb=$2; shift 2 ;;
	--ftrace) ftrace=" vtice.ftrace"; shift ;;
	--panic) panic=" vtice.panic panic=0"; shift ;;
	--) shift; break ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done

# The kernel tools/kernel.sh fetched for the rigs (the machine's own suite;
# build/kernel may hold other suites' kernels too).
kernel_dir() {
	local k
	k=$("$root/tools/kernel.sh" "$root/build/kernel" 2>/dev/null) || return 1
	[[ -f "$k/vmlinux" ]] || return 1
	echo "$k"
}

build_initramfs() {
	local stage=$dir/initramfs.d
	command -v busybox >/dev/null || { echo "run.sh: busybox-static missing" >&2; exit 77; }
	rm -rf "$stage" && mkdir -p "$stage"/{bin,proc,sys,dev,etc,tmp}
	cp "$(command -v busybox)" "$stage/bin/busybox"
	cp "$here/init.sh" "$stage/init" && chmod +x "$stage/init"
	gcc -static -O2 -o "$stage/workload" "$here/workload.c"
	(cd "$stage" && find . | cpio -o -H newc --quiet) > "$dir/initramfs.cpio"
	rm -rf "$stage"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

start() {
	command -v qemu-system-x86_64 >/dev/null || { echo "run.sh: qemu-system-x86_64 missing" >&2; exit 77; }
	local k
	k=$(kernel_dir) || { echo "run.sh: no kernel under build/kernel (run tools/kernel.sh)" >&2; exit 77; }
	mkdir -p "$dir"
	if [[ -f "$dir/qemu.pid" ]] && kill -0 "$(cat "$dir/qemu.pid")" 2>/dev/null; then
		echo "run.sh: a QEMU started in $dir is still running (run.sh stop --dir $dir)" >&2
		exit 1
	fi
	[[ -f "$dir/initramfs.cpio" && "$dir/initramfs.cpio" -nt "$here/workload.c" &&
	   "$dir/initramfs.cpio" -nt "$here/init.sh" ]] || build_initramfs
	[[ -n "$port" ]] || port=$(free_port)
	rm -f "$dir/serial.log" "$dir/kallsyms.txt" "$dir/ftrace.txt"
	# The guest's /proc/kallsyms is dumped over ttyS1 once per kernel version
	# (~15 s of emulated UART) and reused: the PVH boot applies no KASLR.
	local cache=$root/build/qemu-cache/kallsyms-$(basename "$k").txt extra=
	if [[ "$image" != vmlinux ]]; then
		extra=" vtice.nokallsyms"  # KASLR: another boot's table would not match
	elif [[ -s "$cache" ]]; then
		cp "$cache" "$dir/kallsyms.txt.cached"
		extra=" vtice.nokallsyms"
	fi
	local gdb_args target
	case $gdb in
	tcp) gdb_args=(-gdb "tcp:127.0.0.1:$port"); target=127.0.0.1:$port ;;
	unix) rm -f "$dir/gdb.sock"; gdb_args=(-gdb "unix:$dir/gdb.sock,server=on,wait=off"); target=unix:$dir/gdb.sock ;;
	pty) gdb_args=(-chardev pty,id=gdb0 -gdb chardev:gdb0) ;;
	*) echo "run.sh: --gdb must be tcp, unix or pty" >&2; exit 2 ;;
	esac
	qemu-system-x86_64 -accel tcg ${VTICE_QEMU_EXTRA:-} -m 512 -smp "$smp" -cpu max -display none -no-reboot \
		-kernel "$k/$image" -initrd "$dir/initramfs.cpio" \
		-append "console=ttyS0 panic=-1 quiet$extra$ftrace$panic" \
		-serial "file:$dir/serial.log" -serial "file:$dir/kallsyms.txt" \
		-monitor none "${gdb_args[@]}" \
		-daemonize -pidfile "$dir/qemu.pid" > "$dir/qemu.out" 2>&1 || { cat "$dir/qemu.out" >&2; exit 1; }
	# QEMU names the pty it made: "char device redirected to /dev/pts/N (label gdb0)".
	[[ $gdb == pty ]] && target=$(grep -o '/dev/pts/[0-9]*' "$dir/qemu.out" | head -1)
	echo "$port" > "$dir/port"
	echo "$target" > "$dir/target"
	local i
	for ((i = 0; i < 600; i++)); do
		if grep -q VTICE-READY "$dir/serial.log" 2>/dev/null &&
		   { [[ -z "$panic" ]] || grep -q "end Kernel panic" "$dir/serial.log"; }; then
			if [[ "$image" != vmlinux ]]; then
				rm -f "$dir/kallsyms.txt"
			elif [[ -n "$extra" ]]; then
				mv "$dir/kallsyms.txt.cached" "$dir/kallsyms.txt"
			else
				# The guest's tty turned \n into \r\n on the way out.
				tr -d '\r' < "$dir/kallsyms.txt" > "$dir/kallsyms.lf" && mv "$dir/kallsyms.lf" "$dir/kallsyms.txt"
				mkdir -p "$(dirname "$cache")" && cp "$dir/kallsyms.txt" "$cache.$$" && mv "$cache.$$" "$cache"
			fi
			[[ -z "$ftrace" ]] || save_ftrace
			echo "$port"
			return 0
		fi
		kill -0 "$(cat "$dir/qemu.pid")" 2>/dev/null || { echo "run.sh: QEMU died" >&2; cat "$dir/serial.log" >&2; exit 1; }
		sleep 0.1
	done
	echo "run.sh: guest did not reach VTICE-READY in 60 s; serial log:" >&2
	tail -20 "$dir/serial.log" >&2
	stop
	exit 1
}

# The guest's function_graph, cut out of its console log (init.sh frames it).
save_ftrace() {
	sed -n '/^VTICE-FTRACE-BEGIN/,/^VTICE-FTRACE-END/p' "$dir/serial.log" | tr -d '\r' > "$dir/ftrace.txt"
}

stop() {
	[[ -f "$dir/qemu.pid" ]] || return 0
	local pid
	pid=$(cat "$dir/qemu.pid")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$dir/qemu.pid"
}

case $cmd in
start) start ;;
stop) stop ;;
initramfs) mkdir -p "$dir" && build_initramfs ;;
exec)
	[[ $# -gt 0 ]] || { echo "run.sh exec: no command after --" >&2; exit 2; }
	trap stop EXIT
	start >/dev/null
	# vtice attach's kernel cache stays in the run's directory, never in $HOME.
	export VTICE_QEMU_PORT=$(cat "$dir/port") VTICE_QEMU_TARGET=$(cat "$dir/target") VTICE_QEMU_DIR=$dir \
		VTICE_QEMU_KALLSYMS=$dir/kallsyms.txt VTICE_QEMU_FTRACE=$dir/ftrace.txt XDG_CACHE_HOME=$dir/cache \
		VTICE_QEMU_VMLINUX=$(kernel_dir)/vmlinux
	rm -rf "$dir/cache"
	set +e
	"$@"
	exit $?
	;;
-h|--help|help) usage ;;
*) usage >&2; exit 2 ;;
esac
