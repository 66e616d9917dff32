#!/usr/bin/env bash
# Builds Bochs 3.0 (VT-x with MTF, correct NMI/INIT emulation) from Debian's
# trixie source package, with the fixes in bochs3-patches/ (each says what
# Bochs got wrong), and caches the binary under OUT/bochs-<version>-<patches>/.
# Prints the path of bochs-bin on stdout, progress on stderr. Debian's own
# Bochs 2.7 lacks MTF and mis-emulates NMI blocking and INIT (DESIGN.md).
# The system's apt sources are left untouched: a private sources list and
# private list directories hold the one deb-src line for trixie.
set -euo pipefail
# shellcheck source=../../../tools/lib/apt-archive.sh
. "$(dirname "$0")/../../../tools/lib/apt-archive.sh"

out=${1:?usage: bochs3.sh OUTDIR}
# One build serves every CPU model: --enable-cet gives CET (shadow stacks,
# IBT) to the models that have it (tigerlake, sapphire_rapids, arrow_lake)
# and nothing to the others, whose CPUID does not list it.
configure_flags=(--enable-x86-64 --enable-smp --enable-vmx=2 --enable-cpu-level=6 --enable-avx
	--enable-evex --enable-all-optimizations --enable-pci --enable-configurable-msrs --with-nogui
	--disable-plugins --enable-cdrom --enable-cet --enable-instrumentation=instrument/vtice)
# No -g (Bochs's default): debug info made the build 145 s instead of 104 s
# on 2 cores, and the boots wait for it. -O3 -march=native: the binary
# runs on the machine that built it, and ran the rig's scenarios 3 % faster.
compile_flags="-O3 -march=native"
mkdir -p "$out"
out=$(cd "$out" && pwd)
apt_dir=$out/apt
src_dir=$out/src
patch_dir=$(cd "$(dirname "$0")" && pwd)/bochs3-patches
# The rig's instrumentation (../oracle/instrument.h): a log of what the CPU
# did, for the guest to switch on; one untaken branch per hook otherwise.
oracle_dir=$(cd "$(dirname "$0")/../oracle" && pwd)
# A build with other patches, instrumentation or flags is another binary:
# the key names them.
patch_key=$( (cat "$patch_dir"/*.patch "$oracle_dir"/*; echo "${configure_flags[*]} $compile_flags") |
	sha256sum | cut -c1-12)

# Two builds of one tree (ctest and a manual run.sh) would clobber each
# other: the second waits, then finds the first one's binary.
exec 8>"$out/.lock"
flock 8
cached=$(ls -d "$out"/bochs-*-"$patch_key"/bochs-bin 2>/dev/null | sort -V | tail -n1 || true)
if [[ -n "$cached" && -x "$cached" ]]; then
	echo "$cached"
	exit 0
fi

fetch_source() {
	mkdir -p "$apt_dir/lists/partial" "$src_dir"
	echo "deb-src $(archive_uri) trixie main" > "$apt_dir/sources.list"
	local opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
		-o "Dir::State::Lists=$apt_dir/lists" -o "APT::Get::AllowUnauthenticated=true"
		-o "Acquire::AllowInsecureRepositories=true")
	echo "bochs3: fetching Debian's trixie bochs source package" >&2
	apt-get "${opts[@]}" update -q >&2
	# The .dsc can 404 while the tarballs download: tolerate a partial fetch.
	(cd "$src_dir" && apt-get "${opts[@]}" source --download-only bochs >&2) || true
	ls "$src_dir"/bochs_*.orig.tar.* >/dev/null 2>&1 ||
		{ echo "bochs3: error: the bochs .orig tarball did not download" >&2; exit 1; }
}

build() {
	local orig version tree
	orig=$(ls "$src_dir"/bochs_*.orig.tar.* | sort -V | tail -n1)
	version=$(basename "$orig" | sed -E 's/^bochs_([^.]+\.[^.+]+(\.[0-9]+)?)[^/]*/\1/')
	tree=$out/build-tree
	rm -rf "$tree" && mkdir -p "$tree"
	tar -xf "$orig" -C "$tree" --strip-components=1
	local p
	for p in "$patch_dir"/*.patch; do
		echo "bochs3: applying $(basename "$p")" >&2
		patch -p1 -s -d "$tree" <"$p" || { echo "bochs3: error: $p does not apply" >&2; exit 1; }
	done
	mkdir -p "$tree/instrument/vtice"
	cp "$oracle_dir"/* "$tree/instrument/vtice/"
	echo "bochs3: configuring Bochs $version" >&2
	(cd "$tree" && CFLAGS=$compile_flags CXXFLAGS=$compile_flags ./configure "${configure_flags[@]}" \
		>"$out/configure.log" 2>&1) ||
		{ tail -20 "$out/configure.log" >&2; echo "bochs3: error: configure failed" >&2; exit 1; }
	echo "bochs3: building (about 105 s on 2 cores)" >&2
	(cd "$tree" && make -j"$(nproc)" >"$out/make.log" 2>&1) ||
		{ tail -20 "$out/make.log" >&2; echo "bochs3: error: build failed" >&2; exit 1; }
	mkdir -p "$out/bochs-$version-$patch_key"
	install -m 0755 "$tree/bochs" "$out/bochs-$version-$patch_key/bochs-bin"
	rm -rf "$tree"
	echo "$out/bochs-$version-$patch_key/bochs-bin"
}

fetch_source
build
