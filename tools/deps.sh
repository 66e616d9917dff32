#!/usr/bin/env bash
# Install exactly the Debian packages vtice needs, and nothing when they are
# already present. Idempotent: a second run only asks dpkg.
set -euo pipefail

# Build: compilers, CMake, the libraries vtice wraps, test frameworks.
build_pkgs=(
	build-essential cmake pkg-config binutils
	libzydis-dev libelf-dev libdw-dev liblzma-dev liblz4-dev libzstd-dev zlib1g-dev libncurses-dev
	libbpf-dev
	googletest libgtest-dev libgmock-dev libbenchmark-dev
	clang libfuzzer-14-dev libclang-rt-14-dev
)
# Rigs: the Debian kernel, QEMU, Bochs and what boots a kernel in them.
# Bochs 3.0 is built from Debian's trixie source (tests/bochs/lib/bochs3.sh:
# apt-get source needs dpkg-dev; the build needs only build-essential, make
# and xz-utils); Debian's bochs 2.7 stays for run.sh --bochs 2.7, and the
# ROMs of both come from bochsbios and vgabios. gdb drives the debug stub
# over COM2; python3 runs the COM2 relay and host drivers. crash and drgn
# are the oracles that open vtice's vmcores.
# bpftool lists a module's BTF (split on the kernel's): the oracle of args->
# of a module's function.
rig_pkgs=(
	linux-headers-amd64 kmod xz-utils lz4 zstd gzip cpio busybox-static
	qemu-system-x86 bochs bochsbios vgabios xorriso isolinux syslinux-common
	dpkg-dev make g++ patch ca-certificates
	gdb tmux python3 pahole bpftool
	crash python3-drgn
	linux-source flex bison
	dkms openssl
)

want=("${build_pkgs[@]}" "${rig_pkgs[@]}")
missing=()
for pkg in "${want[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	[[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
	echo "deps: all ${#want[@]} packages present"
	exit 0
fi

echo "deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
sudo=()
if ((EUID != 0)); then
	command -v sudo >/dev/null || { echo "deps: need root or sudo to install packages" >&2; exit 1; }
	sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
