#!/usr/bin/env bash
# Boot the Debian kernel in Bochs (emulated VT-x) with the vtice module and a
# test initramfs, run the guest scenarios, then check the serial log.
# See docs/bochs-rig.md. Exit: 0 ok, 1 failure, 77 skipped (no Bochs).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

out=$root/build/bochs
module=auto
vtice_bin=auto
rig_scenarios="load hostile ring overhead cycles"
scenarios=
exclude=
timeout_s=900
stall_s=240
cpus=2
com2=
check=1
stock_kernel=0
bochs_version=3.0
bochs_cache=
kernel_suite=
cpu_model=corei7_skylake_x
guest_env=
kernel_args=

usage() {
	cat <<EOF
usage: tests/bochs/run.sh [options]

Builds the vtice module against the headers of the Debian kernel that
tools/kernel.sh unpacked, packs an initramfs (busybox, the module, msr.ko, cpuid.ko,
the static test client, the vtice binary), makes an ISOLINUX ISO, boots it in
Bochs (corei7_skylake_x, VT-x emulated) and checks the serial log.

options:
  --out DIR          work and log directory (default: build/bochs)
  --module KO|none   module to load (default: build hypervisor/ into DIR);
                     "none" boots without it, every scenario then skips
  --vtice BIN|none   vtice binary to ship for 'vtice hv status'
                     (default: build/vtice if it exists)
  --scenarios LIST   space or comma separated, in the order given
                     (default: "$rig_scenarios", then those of
                     tests/*/bochs-scenarios.sh, see docs/bochs-rig.md)
  --exclude LIST     leave these out of the list (ctest splits the default
                     list between two runs side by side this way)
  --timeout SEC      wall-clock limit for the Bochs run (default: $timeout_s)
  --stall SEC        stop as hung when the guest sends nothing, on its
                     console or on COM2 (the debug stub's line), for SEC
                     after reaching /init (default: $stall_s)
  --cpus N           emulated CPUs (default: $cpus)
  --bochs 3.0|2.7    which Bochs (default 3.0): 3.0 is built once from Debian's
                     trixie source by lib/bochs3.sh (~2 min) and cached;
                     2.7 is Debian's bochs package (no MTF; for comparison)
  --bochs-cache DIR  where lib/bochs3.sh keeps the 3.0 build
                     (default: build/bochs3)
  --com2 HOST:PORT   connect guest ttyS1 to a host TCP listener (debug stub);
                     host drivers of scenarios then do not run
  --stock-kernel     boot Debian's vmlinuz as is (xz: ~85 s slower in Bochs)
                     instead of the same kernel rewrapped with lz4
  --kernel SUITE     boot the kernel of another Debian suite (tools/kernel.sh
                     --suite: bookworm-backports is 6.12), with the module
                     built against its headers (implies --stock-kernel)
  --cpu MODEL        Bochs CPU model (default corei7_skylake_x); tigerlake,
                     sapphire_rapids and arrow_lake have CET (the
                     Bochs 3.0 build has it), core2_penryn_t9600 has VMX
                     without EPT
  --kernel-args ARGS more kernel command line (e.g. no5lvl: Bochs 3.0's
                     sapphire_rapids fails its SMM restore with LA57 on)
  --guest-env "VAR=VALUE ..."
                     shell variables for the guest's scenarios, set before
                     they are read (e.g. TRANSPARENCY_SEED=7)
  --no-check         boot only; check later with tests/bochs/check.sh
  -h, --help         this text

Outputs in DIR: serial.log (guest console), bochs.log, bochs.out,
summary.txt from the checker, and for scenarios with a host driver
host/NAME.log and host/NAME.rc (its output and exit status) and com2.trace
(what crossed COM2; lib/host.sh). Bochs's exit code means nothing (a guest
poweroff ends it with 1): the run is judged by markers in serial.log.
EOF
}

die() { echo "run.sh: error: $*" >&2; exit 1; }

# The words of list $1 that list $2 does not name, in $1's order.
without() {
	local word out=
	for word in $1; do
		[[ " $2 " == *" $word "* ]] || out+="$word "
	done
	echo "$out"
}
skip() {
	echo "run.sh: SKIP: $*" >&2
	echo "$*" > "$out/skipped"
	exit 77
}

# Sets BOCHS_BIN for --bochs; VTICE_BOCHS_BIN overrides the binary (same
# bochsrc flavour). 3.0 is built on first use; a failed build is a failure,
# not a skip: the debugger's scenarios need MTF, which 2.7 lacks.
select_bochs() {
	case "$bochs_version" in
	2.7)
		BOCHS_BIN=${VTICE_BOCHS_BIN:-bochs-bin}
		command -v "$BOCHS_BIN" >/dev/null ||
			skip "bochs is not installed (no $BOCHS_BIN; tools/deps.sh installs it)"
		# Debian builds it with its internal debugger, which stops at t=0
		# unless told to continue (bochs.cmd holds "c").
		BOCHS_EXTRA_ARGS=(-rc "$out/bochs.cmd")
		;;
	3.0)
		BOCHS_BIN=${VTICE_BOCHS_BIN:-}
		if [[ -z "$BOCHS_BIN" ]]; then
			BOCHS_BIN=$("$here/lib/bochs3.sh" "${bochs_cache:-$root/build/bochs3}") ||
				die "building Bochs 3.0 failed (tools/deps.sh installs what it needs)"
		fi
		BOCHS_EXTRA_ARGS=()	# built without the internal debugger: no -rc
		;;
	*) die "--bochs $bochs_version: expected 3.0 or 2.7" ;;
	esac
	[[ -f /usr/share/bochs/BIOS-bochs-latest && -f /usr/share/vgabios/vgabios.bin ]] ||
		skip "the Bochs BIOS or VGA BIOS is missing (bochsbios, vgabios; tools/deps.sh)"
	echo "run.sh: Bochs $bochs_version: $BOCHS_BIN" >&2
	echo "$bochs_version $BOCHS_BIN" > "$out/bochs-version"
}

# Everything runs inside main so bash has parsed the whole script before the
# long Bochs run: editing run.sh meanwhile cannot break a run in progress.
main() {
	while (($#)); do
		case "$1" in
		--out) out=$2; shift ;;
		--module) module=$2; shift ;;
		--vtice) vtice_bin=$2; shift ;;
		--scenarios) scenarios=${2//,/ }; shift ;;
		--exclude) exclude=${2//,/ }; shift ;;
		--timeout) timeout_s=$2; shift ;;
		--stall) stall_s=$2; shift ;;
		--cpus) cpus=$2; shift ;;
		--com2) com2=$2; shift ;;
		--bochs) bochs_version=$2; shift ;;
		--bochs-cache) bochs_cache=$2; shift ;;
		--stock-kernel) stock_kernel=1 ;;
		--kernel) kernel_suite=$2; stock_kernel=1; shift ;;
		--cpu) cpu_model=$2; shift ;;
		--guest-env) guest_env=$2; shift ;;
		--kernel-args) kernel_args=$2; shift ;;
		--no-check) check=0 ;;
		-h | --help) usage; exit 0 ;;
		*) echo "run.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
		esac
		shift
	done

	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	rm -f "$out/skipped" "$out/timed-out" "$out/wall-to-init" "$out/wall-seconds" "$out/serial.log" "$out/summary.txt"

	select_bochs
	for tool in xorriso cpio gcc busybox; do
		command -v "$tool" >/dev/null || die "$tool is missing: run tools/deps.sh"
	done
	# ldd fails on a static executable: the initramfs has no C library for busybox.
	[[ -x /bin/busybox ]] && ! ldd /bin/busybox >/dev/null 2>&1 ||
		die "/bin/busybox is not the static busybox: install busybox-static"

	source "$here/lib/build.sh"

	# Other components add scenarios in tests/<component>/bochs-scenarios.sh:
	# shell functions scenario_NAME that /init sources and runs after ours.
	extra_files=$(ls "$root"/tests/*/bochs-scenarios.sh 2>/dev/null || true)
	if [[ -z "$scenarios" ]]; then
		scenarios="$rig_scenarios $(extra_scenario_names $extra_files)"
	fi
	scenarios=$(without "$scenarios" "$exclude")
	[[ -n "${scenarios// /}" ]] || die "--exclude left no scenario to run"

	if [[ -n "$kernel_suite" ]]; then
		kdir=$("$root/tools/kernel.sh" --suite "$kernel_suite" --headers "$root/build/kernel")
	else
		kdir=$("$root/tools/kernel.sh" "$root/build/kernel")
	fi
	version=$(<"$kdir/version")
	HOST_KERNEL_DIR=$kdir	# for the host drivers (lib/host.sh)
	headers=$(kernel_headers "$version" "$kdir")
	echo "$version $cpu_model" > "$out/kernel-and-cpu"

	ko=
	case "$module" in
	none) ;;
	auto) ko=$(build_module "$root" "$headers" "$out/module") ;;
	*) [[ -f "$module" ]] || die "--module $module: no such file"; ko=$module ;;
	esac
	[[ -n "$ko" ]] && check_vermagic "$ko" "$version"
	guest_kos=
	[[ -n "$ko" ]] && guest_kos=$(build_guest_modules "$root" "$headers" "$out/guest-modules")

	if [[ "$vtice_bin" == auto ]]; then
		vtice_bin=none
		[[ -x "$root/build/vtice" ]] && vtice_bin=$root/build/vtice
	fi

	kernel=$kdir/vmlinuz
	if ((!stock_kernel)); then
		kernel=$("$here/lib/lz4-kernel.sh" "$kdir" "$root/build/bochs-kernel") ||
			{ echo "run.sh: warning: no lz4 rewrap, booting the stock (slow) vmlinuz" >&2; kernel=$kdir/vmlinuz; }
	fi

	for assignment in $guest_env; do
		[[ "$assignment" =~ ^[A-Z_][A-Z0-9_]*=[A-Za-z0-9_.,:/-]*$ ]] ||
			die "--guest-env: '$assignment' is not VAR=VALUE (capitals, a plain value)"
	done
	build_client "$root" "$out/client"
	build_initramfs "$out/initramfs" "$out/initrd.img" "$kdir" "$version" "$ko" \
		"$vtice_bin" "$scenarios" "$here" "$extra_files" "$guest_kos"
	build_iso "$out/iso" "$out/vtice.iso" "$kernel" "$out/initrd.img"
	# Scenarios with a host driver get COM2 through the relay (lib/host.sh).
	source "$here/lib/host.sh"
	if host_plan "$out" "$scenarios" $extra_files; then
		if [[ -n "$com2" ]]; then
			host_not_started "$out" "--com2 $com2 was given"
		else
			host_start_relay "$out"
			com2=$HOST_BOCHS_COM2
		fi
	fi
	write_bochsrc "$here/bochsrc.in" "$out" "$cpus" "$com2" "$bochs_version" "$cpu_model"

	source "$here/lib/boot.sh"
	run_bochs "$out" "$timeout_s" "$stall_s"
	host_finish "$out"

	if ((check)); then
		"$here/check.sh" "$out/serial.log" all | tee "$out/summary.txt"
		exit "${PIPESTATUS[0]}"
	fi
}

main "$@"
