#!/usr/bin/env bash
# Fetch a Debian kernel for the test rigs: its image, and with --headers the
# headers to build vtice.ko against it.
#
# Usage: tools/kernel.sh [--suite SUITE] [--headers] [--debug] [OUTDIR]   (default OUTDIR: build/kernel)
#
#   --suite SUITE  the Debian suite whose linux-image-amd64 to take:
#                  bookworm-backports (6.12), trixie, sid, bullseye (5.10), ...
#                  Default: the machine's own apt sources (bookworm: 6.1).
#                  Another suite is read through a private sources list under
#                  OUTDIR/apt-SUITE; the system's apt sources are left alone.
#   --headers      also unpack linux-headers (+ -common, linux-kbuild) into
#                  OUTDIR/<version>/headers: KDIR=OUTDIR/<version>/headers/amd64
#   --debug        also the vmlinux with debug info from linux-image-<version>-dbg
#                  (~860 MB download), as OUTDIR/<version>/vmlinux-dbg: what
#                  crash and drgn need to open a vmcore of this kernel
#
# The version is whatever linux-image-amd64 of that suite depends on today;
# it is never hard-coded. Packages are unpacked (not installed: no initramfs
# or boot loader hooks run) into OUTDIR/<version>/, and the uncompressed
# vmlinux is cut out of vmlinuz so QEMU can boot it directly. Prints that
# directory. Re-running is cheap: a complete directory is reused.
set -euo pipefail
# shellcheck source=lib/apt-archive.sh
. "$(dirname "$0")/lib/apt-archive.sh"

suite=
headers=0
debug=0
out=build/kernel
while (($#)); do
	case $1 in
	--suite) suite=$2; shift ;;
	--headers) headers=1 ;;
	--debug) debug=1 ;;
	-h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "kernel.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) out=$1 ;;
	esac
	shift
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

apt_opts=()

private_sources() {
	local dir=$out/apt-$suite
	mkdir -p "$dir/lists/partial"
	echo "deb $(archive_uri) $suite main" > "$dir/sources.list"
	apt_opts=(-o "Dir::Etc::SourceList=$dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")
	mkdir -p "$dir/cache/archives/partial"
	if [[ ! -f $dir/.updated || -n $(find "$dir/.updated" -mmin +720) ]]; then
		echo "kernel.sh: reading Debian's $suite package list" >&2
		apt-get "${apt_opts[@]}" update -q >&2
		touch "$dir/.updated"
	fi
}

depends_of() {
	apt-cache "${apt_opts[@]}" depends "$1" 2>/dev/null | awk -v want="$2" '$1 == "Depends:" && $2 ~ want { print $2; exit }'
}

[[ -n $suite ]] && private_sources
image_pkg=$(depends_of linux-image-amd64 '^linux-image-[0-9]')
if [[ -z "$image_pkg" && -z "$suite" && $EUID -eq 0 ]]; then
	echo "kernel.sh: no package lists yet; running apt-get update" >&2
	apt-get update -q >&2
	image_pkg=$(depends_of linux-image-amd64 '^linux-image-[0-9]')
fi
if [[ -z "$image_pkg" ]]; then
	echo "kernel.sh: cannot resolve linux-image-amd64${suite:+ in $suite} (run apt-get update as root)" >&2
	exit 1
fi
version=${image_pkg#linux-image-}
version=${version%-unsigned}
dir="$out/$version"

download() {
	(cd "$1" && apt-get "${apt_opts[@]}" download -q "${@:2}" >&2)
}

fetch_image() {
	rm -rf "$dir/pkg" && mkdir -p "$dir/pkg"
	echo "kernel.sh: downloading $image_pkg" >&2
	download "$dir" "$image_pkg"
	dpkg-deb -x "$dir"/"$image_pkg"_*.deb "$dir/pkg"
	rm -f "$dir"/"$image_pkg"_*.deb
	cp "$dir/pkg/boot/vmlinuz-$version" "$dir/vmlinuz"
	cp "$dir/pkg/boot/config-$version" "$dir/config"
	echo "$version" > "$dir/version"
	extract_vmlinux
}

# bzImage layout (Documentation/x86/boot.rst): the protected-mode kernel starts
# at (setup_sects + 1) * 512, and the compressed payload sits payload_offset
# (u32 at 0x248) bytes into it.
extract_vmlinux() {
	u8()  { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }
	u32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
	local setup_sects payload_offset start magic decompress
	setup_sects=$(u8 "$dir/vmlinuz" $((0x1f1)))
	((setup_sects == 0)) && setup_sects=4
	payload_offset=$(u32 "$dir/vmlinuz" $((0x248)))
	start=$(((setup_sects + 1) * 512 + payload_offset))
	magic=$(od -An -tx1 -j "$start" -N6 "$dir/vmlinuz" | tr -d ' ')
	case "$magic" in
	fd377a585a00) decompress=(xz -dc) ;;
	28b52ffd*) decompress=(zstd -dc) ;;
	02214c18*) decompress=(lz4 -dc) ;;
	1f8b*) decompress=(gzip -dc) ;;
	*) echo "kernel.sh: unknown payload magic $magic at $start" >&2; exit 1 ;;
	esac
	# The payload is followed by a 4-byte size trailer that decompressors warn about.
	tail -c +$((start + 1)) "$dir/vmlinuz" | "${decompress[@]}" > "$dir/vmlinux" 2>/dev/null || true
	if [[ "$(od -An -tx1 -N4 "$dir/vmlinux" | tr -d ' ')" != 7f454c46 ]]; then
		echo "kernel.sh: extracted vmlinux is not an ELF file" >&2
		exit 1
	fi
}

# linux-headers-V (its top Makefile includes -common by absolute path, which
# is rewritten to where it was unpacked) and the kbuild tools it names.
fetch_headers() {
	local hdr_pkg=linux-headers-$version pkgs common kbuild
	common=$(depends_of "$hdr_pkg" '^linux-headers-.*-common')
	kbuild=$(depends_of "$hdr_pkg" '^linux-kbuild-')
	pkgs=("$hdr_pkg" "$common" "$kbuild")
	echo "kernel.sh: downloading ${pkgs[*]}" >&2
	rm -rf "$dir/headers" && mkdir -p "$dir/headers/root"
	download "$dir/headers" "${pkgs[@]}"
	local deb
	for deb in "$dir"/headers/*.deb; do
		dpkg-deb -x "$deb" "$dir/headers/root"
	done
	rm -f "$dir"/headers/*.deb
	local src=$dir/headers/root/usr/src
	sed -i -e "s|/usr/src/|$src/|g" "$src/$hdr_pkg/Makefile"
	ln -sfn "$src/$hdr_pkg" "$dir/headers/amd64"
	touch "$dir/headers/.complete"
}

# Only the vmlinux is kept of the -dbg package (its modules' debug info is
# 5 GB unpacked); its build ID must be the booted image's.
fetch_debug() {
	local pkg=linux-image-$version-dbg tmp=$dir/dbg.tmp
	echo "kernel.sh: downloading $pkg" >&2
	rm -rf "$tmp" && mkdir -p "$tmp"
	download "$tmp" "$pkg"
	dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb | tar -x -C "$tmp" "./usr/lib/debug/boot/vmlinux-$version"
	mv "$tmp/usr/lib/debug/boot/vmlinux-$version" "$dir/vmlinux-dbg"
	rm -rf "$tmp"
	build_id() { readelf -n "$1" | awk '/Build ID/ { print $3 }'; }
	if [[ "$(build_id "$dir/vmlinux-dbg")" != "$(build_id "$dir/vmlinux")" ]]; then
		echo "kernel.sh: $pkg's vmlinux is not the build of $dir/vmlinux" >&2
		rm -f "$dir/vmlinux-dbg"
		exit 1
	fi
	touch "$dir/.dbg-complete"
}

[[ -f "$dir/.complete" ]] || { fetch_image; touch "$dir/.complete"; }
((headers)) && [[ ! -f "$dir/headers/.complete" ]] && fetch_headers
((debug)) && [[ ! -f "$dir/.dbg-complete" ]] && fetch_debug
echo "$dir"
