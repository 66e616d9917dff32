#!/usr/bin/env bash
# vtice.ko installed like any kernel module (issue 21 §5): through DKMS for
# two kernels, each built with zero warnings (the Debian 6.1 the rigs boot, and 6.12 from
# bookworm-backports, whose headers tools/kernel.sh unpacks), and signed
# for Secure Boot with the kernel's own sign-file and a throwaway key.
# The oracles are dkms's own status, modinfo's vermagic and signer.
# Usage: install_test.sh REPO_ROOT KERNEL_DIR
#   KERNEL_DIR: tools/kernel.sh's output, with the installed Debian kernel
#   (its headers in /lib/modules/V/build) and one unpacked --headers.
# Exit 77 (skipped) when not root or dkms/openssl are missing.
set -uo pipefail
root=$(cd "$1" && pwd)
k61= k612=
for d in "$2"/*/; do
	d=$(cd "$d" && pwd)
	[[ -f $d/version ]] || continue
	if [[ -f $d/headers/.complete ]]; then k612=$d
	elif [[ -e /lib/modules/$(<"$d/version")/build ]]; then k61=$d
	fi
done
[[ -n $k61 && -n $k612 ]] || { echo "SKIP: need an installed kernel's headers and one unpacked by tools/kernel.sh --headers in $2"; exit 77; }
[[ $EUID == 0 ]] || { echo "SKIP: DKMS installs into /lib/modules: root only"; exit 77; }
for tool in dkms openssl; do
	command -v $tool >/dev/null || { echo "SKIP: $tool is not installed (tools/deps.sh)"; exit 77; }
done
v61=$(<"$k61/version") v612=$(<"$k612/version")
kdir612=$k612/headers/amd64
failures=0
check() {
	if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; failures=$((failures + 1)); fi
}
work=$(mktemp -d)
# A private copy of the sources: the builds below (DKMS's, sign's) never
# touch the source tree, so the Bochs rigs may copy it meanwhile and this
# test need not run alone.
tree=$work/tree
mkdir -p "$tree"
tar -C "$root" -cf - --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod' \
	--exclude='*.mod.c' --exclude=Module.symvers --exclude=modules.order hypervisor include |
	tar -C "$tree" -xf -
made_612_tree=0
cleanup() {
	make -s -C "$tree/hypervisor" dkms-uninstall >/dev/null 2>&1
	((made_612_tree)) && rm -rf "/lib/modules/$v612"
	rm -rf "$work"
}
trap cleanup EXIT

# As if 6.12's headers package were installed: its build tree where DKMS
# and depmod look for a kernel.
if [[ ! -e /lib/modules/$v612 ]]; then
	mkdir -p "/lib/modules/$v612" && ln -s "$kdir612" "/lib/modules/$v612/build" && made_612_tree=1
fi

# Zero warnings, objtool's included (issue 21 §1): any line of DKMS's kbuild
# log that says "warning" or "error" fails the kernel's build.
build_complaints() {
	grep -iE "warning|error" "$dkms_log" 2>/dev/null | grep -v "pahole version differs"
}
dkms_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$tree/hypervisor/dkms.conf")
for v in "$v61" "$v612"; do
	make -s -C "$tree/hypervisor" dkms-install KVER="$v" >"$work/dkms-$v.log" 2>&1
	check "dkms-install-$v" '[[ $? == 0 ]] || { tail -5 "$work/dkms-$v.log"; false; }'
	dkms_log=/var/lib/dkms/vtice/$dkms_version/$v/x86_64/log/make.log
	check "dkms-no-warning-$v" '[[ -s $dkms_log ]] && ! build_complaints || { build_complaints | head -20; false; }'
	ko=$(ls /lib/modules/"$v"/updates/dkms/vtice.ko* 2>/dev/null | head -1)
	check "dkms-status-$v" 'dkms status -m vtice -k "$v" | grep -q "installed"'
	check "dkms-vermagic-$v" '[[ -n "$ko" ]] && modinfo -F vermagic "$ko" | grep -q "^$v "'
done
check "dkms-both-kernels" '[[ $(dkms status -m vtice | grep -c installed) == 2 ]]'

# Secure Boot: a throwaway MOK-style key, the kernel's sign-file, and
# modinfo reading the signature back.
openssl req -new -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=vtice install test/" \
	-keyout "$work/mok.priv" -outform DER -out "$work/mok.der" >/dev/null 2>&1
make -s -C "$tree/hypervisor" sign KDIR="/lib/modules/$v61/build" KEY="$work/mok.priv" CERT="$work/mok.der" \
	>"$work/sign.log" 2>&1
check "sign" '[[ $? == 0 ]] || { tail -5 "$work/sign.log"; false; }'
check "signer" 'modinfo -F signer "$tree/hypervisor/vtice.ko" | grep -q "vtice install test"'
check "sig-hash" '[[ $(modinfo -F sig_hashalgo "$tree/hypervisor/vtice.ko") == sha256 ]]'
check "sign-needs-a-key" '! make -s -C "$tree/hypervisor" sign 2>&1 | grep -q "signed"'

echo "install: $failures failures"
((failures == 0))
