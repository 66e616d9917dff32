#!/usr/bin/env bash
# vtice.ko builds with zero warnings, objtool's included, against every
# kernel's headers given (issue 21 §1): each build runs in a copy of the
# sources, and any line of the build that says "warning" or "error" fails it.
# Usage: build_kernels_test.sh REPO_ROOT KDIR|KERNEL_DIR...   (exit 77: none)
#   KERNEL_DIR: tools/kernel.sh's output; each kernel in it counts, by the
#   headers unpacked there (--headers) or installed in /lib/modules/V/build.
set -uo pipefail
root=$(cd "$1" && pwd)
shift
kdirs=()
for arg in "$@"; do
	if [[ -e $arg/Makefile ]]; then
		kdirs+=("$arg")
		continue
	fi
	for v in "$arg"/*/version; do
		[[ -f $v ]] || continue
		d=$(dirname "$v")
		if [[ -e $d/headers/amd64/Makefile ]]; then kdirs+=("$d/headers/amd64")
		elif [[ -e /lib/modules/$(<"$v")/build/Makefile ]]; then kdirs+=("/lib/modules/$(<"$v")/build")
		fi
	done
done
((${#kdirs[@]})) || { echo "SKIP: no kernel headers found in $*"; exit 77; }
set -- "${kdirs[@]}"
failures=0
for kdir in "$@"; do
	[[ -e $kdir/Makefile ]] || { echo "SKIP $kdir: no headers there"; continue; }
	kdir=$(cd "$kdir" && pwd)
	work=$(mktemp -d)
	cp -r "$root/hypervisor" "$root/include" "$work/"
	release=$(cat "$kdir/include/config/kernel.release" 2>/dev/null || basename "$kdir")
	start=$(date +%s)
	make -C "$work/hypervisor" KDIR="$kdir" -j"$(nproc)" >"$work/build.log" 2>&1
	rc=$?
	complaints=$(grep -iE "warning|error" "$work/build.log" | grep -v "pahole version differs" || true)
	if [[ $rc == 0 && -z $complaints && -f $work/hypervisor/vtice.ko ]]; then
		echo "PASS $release: vtice.ko in $(($(date +%s) - start)) s, no warning"
	else
		echo "FAIL $release: exit $rc"
		echo "$complaints" | head -20
		failures=$((failures + 1))
	fi
	rm -rf "$work"
done
((failures == 0))
