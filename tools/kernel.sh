#!/usr/bin/env bash
# Fetch the Debian kernel that the test rigs boot and the symbol tests read.
#
# Usage: tools/kernel.sh [OUTDIR]     (default: build/kernel)
#
# The version is whatever linux-image-amd64 depends on today; it is never
# hard-coded. The package is unpacked (not installed: no initramfs or boot
# loader hooks run) into OUTDIR/<version>/, and the uncompressed vmlinux is
# cut out of vmlinuz so QEMU can boot it directly. Prints that directory.
# Re-running is cheap: a complete directory is reused.
set -euo pipefail

out=${1:-build/kernel}
mkdir -p "$out"
out=$(cd "$out" && pwd)

resolve_image_pkg() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}
image_pkg=$(resolve_image_pkg)
if [[ -z "$image_pkg" && $EUID -eq 0 ]]; then
	echo "kernel.sh: no package lists yet; running apt-get update" >&2
	apt-get update -q >&2
	image_pkg=$(resolve_image_pkg)
fi
if [[ -z "$image_pkg" ]]; then
	echo "kernel.sh: cannot resolve linux-image-amd64 (run apt-get update as root)" >&2
	exit 1
fi
version=${image_pkg#linux-image-}
dir="$out/$version"

if [[ -f "$dir/.complete" ]]; then
	echo "$dir"
	exit 0
fi

rm -rf "$dir" && mkdir -p "$dir/pkg"
echo "kernel.sh: downloading $image_pkg" >&2
(cd "$dir" && apt-get download -q "$image_pkg" >&2)
dpkg-deb -x "$dir"/"$image_pkg"_*.deb "$dir/pkg"
rm -f "$dir"/"$image_pkg"_*.deb

cp "$dir/pkg/boot/vmlinuz-$version" "$dir/vmlinuz"
cp "$dir/pkg/boot/config-$version" "$dir/config"
echo "$version" > "$dir/version"

# bzImage layout (Documentation/x86/boot.rst): the protected-mode kernel starts
# at (setup_sects + 1) * 512, and the compressed payload sits payload_offset
# (u32 at 0x248) bytes into it.
u8()  { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }
u32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
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

touch "$dir/.complete"
echo "$dir"
