#!/usr/bin/env bash
# Rewrap Debian's kernel in a bzImage whose payload is lz4, not xz.
#
# Usage: lz4-kernel.sh KERNEL_DIR CACHE_DIR    (prints the new bzImage's path)
#
# Why: under Bochs the xz decompressor takes ~85 s of a ~100 s boot; lz4
# takes a few seconds. The kernel itself is byte-for-byte Debian's: the
# payload decompressed from Debian's vmlinuz (vmlinux.bin + its relocation
# table, as tools/kernel.sh extracted it) is recompressed as it is. Only the
# decompressor and the real-mode setup are rebuilt, from Debian's
# linux-source of the same version, configured with Debian's config with
# KERNEL_LZ4 instead of KERNEL_XZ and without the EFI stub (the rig boots
# through the BIOS). Nothing of the kernel proper is compiled.
#
# kbuild wants a vmlinux with symbols and relocations to derive two inputs;
# Debian ships neither, so both are supplied from the payload instead:
#  - voffset.h (_text, __start_rodata, __bss_start, _end): from the section
#    headers, which the stripped ELF keeps (vmlinux.lds.S: _text and
#    __start_rodata open .text and .rodata, __bss_start opens .bss, _end is
#    the page-aligned end of .brk);
#  - vmlinux.relocs: the bytes after the ELF image in the payload.
set -euo pipefail

kdir=$1
mkdir -p "$2"
cache=$(cd "$2" && pwd)
version=$(<"$kdir/version")
out=$cache/$version
# Two rigs starting side by side would build into one directory: the second
# waits for the first, then finds its bzImage.
exec 8>"$cache/.lock"
flock 8
if [[ -f "$out/bzImage" && "$out/bzImage" -nt "$kdir/vmlinux" ]]; then
	echo "$out/bzImage"
	exit 0
fi

series=$(sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p' <<<"$version")
tarball=/usr/src/linux-source-$series.tar.xz
[[ -f "$tarball" ]] || { echo "lz4-kernel: $tarball missing (apt-get install linux-source-$series)" >&2; exit 1; }
src_version=$(dpkg-query -W -f='${Version}' "linux-source-$series")
# Debian's package version is in the image's version string ("... Debian 6.1.192-2 (...)").
image_version=$(strings -n 20 "$kdir/vmlinuz" | sed -n 's/.* Debian \([^ ]*\) (.*/\1/p' | head -n1)
if [[ "$src_version" != "$image_version" ]]; then
	echo "lz4-kernel: linux-source is $src_version but the kernel is $image_version" >&2
	exit 1
fi
for tool in flex bison lz4; do
	command -v "$tool" >/dev/null || { echo "lz4-kernel: $tool missing (tools/deps.sh)" >&2; exit 1; }
done

rm -rf "$out" && mkdir -p "$out"
echo "lz4-kernel: unpacking the parts of linux-source $src_version that arch/x86/boot needs" >&2
tar xJf "$tarball" -C "$out" --strip-components=1 --wildcards \
	"linux-source-$series/Makefile" "linux-source-$series/Kbuild" "linux-source-$series/*Kconfig*" \
	"linux-source-$series/arch/x86/*" "linux-source-$series/include/*" "linux-source-$series/scripts/*" \
	"linux-source-$series/kernel/*" "linux-source-$series/lib/*" "linux-source-$series/tools/*" \
	"linux-source-$series/usr/*" "linux-source-$series/certs/*"
src=$out

cp "$kdir/config" "$src/.config"
"$src/scripts/config" --file "$src/.config" --disable KERNEL_XZ --enable KERNEL_LZ4 \
	--disable EFI_STUB --disable DEBUG_INFO_BTF
make -s -C "$src" olddefconfig >&2

# The payload: ELF image, then the relocation table up to the end.
vmlinux=$kdir/vmlinux
shoff=$(readelf -h "$vmlinux" | awk '/Start of section headers/ { print $5 }')
shnum=$(readelf -h "$vmlinux" | awk '/Number of section headers/ { print $5 }')
elf_end=$((shoff + shnum * 64))
head -c "$elf_end" "$vmlinux" > "$src/vmlinux"
tail -c +$((elf_end + 1)) "$vmlinux" > "$out/vmlinux.relocs"

sections() { readelf -S -W "$vmlinux" | sed -n 's/^ *\[ *[0-9]*\] *//p'; }
section_addr() { sections | awk -v s="$1" '$1 == s { print $3 }'; }
section_size() { sections | awk -v s="$1" '$1 == s { print $5 }'; }
brk=$(section_addr .brk)
brk_size=$(section_size .brk)
[[ -n "$brk" && -n "$brk_size" ]] || { echo "lz4-kernel: no .brk section in $vmlinux" >&2; exit 1; }
end=$(printf '%x' $(((0x$brk + 0x$brk_size + 4095) & ~4095)))
for sym in .text .rodata .bss; do
	[[ -n "$(section_addr $sym)" ]] || { echo "lz4-kernel: no $sym section in $vmlinux" >&2; exit 1; }
done
cat > "$out/vmlinux.nm" <<NM
$(section_addr .text) T _text
$(section_addr .rodata) D __start_rodata
$(section_addr .bss) B __bss_start
$end B _end
NM

# nm and relocs stand-ins that answer for the symbol-less vmlinux only.
cat > "$out/nm" <<WRAP
#!/bin/sh
[ "\$1" = vmlinux ] && exec cat "$out/vmlinux.nm"
exec nm "\$@"
WRAP
cat > "$out/relocs" <<WRAP
#!/bin/sh
[ "\$1" = --abs-relocs ] && exit 0
exec cat "$out/vmlinux.relocs"
WRAP
chmod +x "$out/nm" "$out/relocs"

# The decompressor mixes the build string into its KASLR seed; use Debian's,
# from the setup header's kernel_version string ("... #1 SMP ...").
uts=$(strings -n 20 "$kdir/vmlinuz" | sed -n 's/^[^ ]* ([^)]*) \(#.*\)$/\1/p' | head -n1)
mkdir -p "$src/include/generated"
echo "#define UTS_VERSION \"$uts\"" > "$src/include/generated/utsversion.h"

cat > "$src/vtice-boot.mk" <<'MK'
PHONY += vtice-bzimage
vtice-bzimage: outputmakefile archheaders archscripts scripts_basic include/config/kernel.release \
		asm-generic $(version_h) include/generated/utsrelease.h \
		include/generated/compile.h include/generated/autoconf.h
	$(Q)$(MAKE) $(build)=. include/generated/bounds.h include/generated/asm-offsets.h
	$(Q)$(MAKE) $(build)=arch/x86/kernel/cpu arch/x86/kernel/cpu/capflags.c
	$(Q)$(MAKE) $(build)=arch/x86/lib arch/x86/lib/inat-tables.c
	$(Q)$(MAKE) $(build)=arch/x86/boot arch/x86/boot/bzImage
MK
echo "lz4-kernel: building the lz4 decompressor and setup" >&2
make -s -C "$src" -f Makefile -f vtice-boot.mk -j2 NM="$out/nm" CMD_RELOCS="$out/relocs" \
	vtice-bzimage >"$out/build.log" 2>&1 || { tail -n 30 "$out/build.log" >&2; exit 1; }
cp "$src/arch/x86/boot/bzImage" "$out/bzImage"
echo "$out/bzImage"
