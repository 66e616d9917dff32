# Build steps of the Bochs rig, sourced by run.sh. Every function prints its
# progress on stderr; those that produce a file print its path on stdout.

# The module must be built against the headers of exactly the kernel the rig
# boots; Debian installs both from meta packages that can drift apart.
kernel_headers() {
	local version=$1 kdir=${2:-} dir=/usr/src/linux-headers-$1
	# A kernel tools/kernel.sh --headers unpacked (another suite's).
	if [[ -n "$kdir" && -f "$kdir/headers/amd64/Makefile" ]]; then
		echo "$kdir/headers/amd64"
		return
	fi
	if [[ ! -f "$dir/Makefile" ]]; then
		echo "run.sh: error: the rig boots kernel $version but $dir is missing." >&2
		echo "  installed headers: $(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | xargs -n1 basename | tr '\n' ' ')" >&2
		echo "  linux-image-amd64 and linux-headers-amd64 differ: apt-get update && apt-get install linux-headers-amd64" >&2
		exit 1
	fi
	echo "$dir"
}

# The sources a module build reads, and the headers it builds against: a
# build of the same key is the same module.
module_key() {
	local root=$1 headers=$2
	{
		echo "$headers $(cat "$headers/include/config/kernel.release" 2>/dev/null)"
		(cd "$root" && find hypervisor include -type f \( -name '*.[chS]' -o -name Kbuild -o -name Makefile \
			-o -name '*.lds' -o -name '*.conf' \) | LC_ALL=C sort | xargs sha256sum)
	} | sha256sum | cut -c1-16
}

# Keeps the newest four builds; one another run holds is left alone.
prune_module_cache() {
	local old
	for old in $(ls -dt "$1"/*/ 2>/dev/null | tail -n +5); do
		old=${old%/}
		(flock -n 9 && rm -rf "$old" "$old.lock") 9>"$old.lock"
	done
}

# Builds a private copy of hypervisor/ so a rig run never races with a build
# in the source tree (its kbuild objects live next to the sources). Runs of
# the same sources and headers share one build (build/module-cache), which
# the first of them makes while the others wait.
build_module() {
	local root=$1 headers=$2 dir=$3 key cache ko
	[[ -f "$root/hypervisor/Makefile" ]] ||
		{ echo "run.sh: error: $root/hypervisor/Makefile not found (use --module none to boot without it)" >&2; exit 1; }
	key=$(module_key "$root" "$headers")
	cache=$root/build/module-cache/$key
	mkdir -p "$cache"
	exec 7>"$cache.lock"
	flock 7
	if [[ ! -f "$cache/done" ]]; then
		rm -rf "$cache" && mkdir -p "$cache/src"
		cp -a "$root/hypervisor" "$root/include" "$cache/src/"
		echo "run.sh: building the module against $headers" >&2
		make -s -C "$cache/src/hypervisor" KDIR="$headers" -j2 >"$cache/build.log" 2>&1 ||
			{ cat "$cache/build.log" >&2; echo "run.sh: error: module build failed" >&2; exit 1; }
		touch "$cache/done"
		prune_module_cache "$root/build/module-cache"
	else
		echo "run.sh: the module of these sources and headers is built already ($cache)" >&2
	fi
	exec 7>&-
	rm -rf "$dir" && mkdir -p "$dir"
	cp -a "$cache/src" "$cache/build.log" "$dir/"
	ko=$(find "$dir/src/hypervisor" -name vtice.ko | head -n1)
	[[ -n "$ko" ]] || { echo "run.sh: error: the module build produced no vtice.ko" >&2; exit 1; }
	echo "$ko"
}

# Test modules scenarios load (tests/*/guest-modules/NAME/ with a Kbuild):
# built against the same headers, installed as /lib/vtice/NAME.ko. Prints
# the .ko paths.
build_guest_modules() {
	local root=$1 headers=$2 dir=$3 src name
	rm -rf "$dir" && mkdir -p "$dir"
	for src in "$root"/tests/*/guest-modules/*/; do
		[[ -f "$src/Kbuild" ]] || continue
		name=$(basename "$src")
		cp -a "$src" "$dir/$name"
		make -s -C "$headers" M="$dir/$name" VTICE_ROOT="$root" -j2 modules >"$dir/$name.log" 2>&1 ||
			{ cat "$dir/$name.log" >&2; echo "run.sh: error: guest module $name failed to build" >&2; exit 1; }
		ls "$dir/$name/$name.ko"
	done
}

check_vermagic() {
	local ko=$1 version=$2 magic
	magic=$(modinfo -F vermagic "$ko")
	[[ "$magic" == "$version "* ]] ||
		{ echo "run.sh: error: $ko was built for '${magic%% *}', the rig boots $version" >&2; exit 1; }
}

build_client() {
	local root=$1 dir=$2
	mkdir -p "$dir"
	echo "run.sh: building the guest test client" >&2
	gcc -static -O2 -Wall -Wextra -std=gnu11 -I"$root/include/uapi" \
		-o "$dir/vtice-test" "$root"/tests/bochs/client/*.c
}

# Copies a dynamically linked binary and the libraries ldd names, at the same
# absolute paths, so it runs in the busybox initramfs.
copy_with_libs() {
	local bin=$1 rootfs=$2 lib
	install -D -m 0755 "$bin" "$rootfs/bin/$(basename "$bin")"
	# The rootfs lives in the guest's 256 MB: debug info (most of a
	# RelWithDebInfo vtice) made the initramfs fail to unpack ("write error").
	strip --strip-debug "$rootfs/bin/$(basename "$bin")"
	for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
		install -D -m 0755 "$(readlink -f "$lib")" "$rootfs$lib"
	done
}

# Scenario names defined by extra files, in file order.
# Scenarios a file declares "# bochs-solo-scenario: NAME" end the machine
# (a crash), and "# bochs-manual-scenario: NAME" ones are not ready for
# every run (the file says why): they run only when asked for by name,
# never by default. "# bochs-last-scenario: NAME" ones run after all the
# others (hvreboot leaves the module loaded for the poweroff).
extra_scenario_names() {
	(($#)) || return 0
	local skip last
	skip=$(sed -n 's/^# bochs-\(solo\|manual\|last\)-scenario: *//p' "$@" | tr '\n' ' ')
	last=$(sed -n 's/^# bochs-last-scenario: *//p' "$@" | tr '\n' ' ')
	sed -n 's/^scenario_\([a-z0-9_]*\)() *{.*/\1/p' "$@" |
		while read -r name; do [[ " $skip " == *" $name "* ]] || printf '%s ' "$name"; done
	[[ -z "${last// /}" ]] || printf '%s ' $last
}

# The kernel package's module $3 (NAME.ko or NAME.ko.xz) under $1/pkg for
# version $2; $4 is the option that builds it, for the error.
debian_module_file() {
	local file
	file=$(find "$1/pkg/lib/modules/$2" -name "$3.ko*" | head -n1)
	[[ -n "$file" ]] || { echo "run.sh: error: $3.ko not found under $1/pkg ($4=m expected)" >&2; exit 1; }
	echo "$file"
}

build_initramfs() {
	local dir=$1 img=$2 kdir=$3 version=$4 ko=$5 vtice_bin=$6 scenarios=$7 here=$8
	local extra_files=$9 guest_kos=${10} msr cpuid f n=0
	msr=$(debian_module_file "$kdir" "$version" msr CONFIG_X86_MSR) || exit 1
	# A second module for hv.probe-module, which loads it itself.
	cpuid=$(debian_module_file "$kdir" "$version" cpuid CONFIG_X86_CPUID) || exit 1
	rm -rf "$dir" && mkdir -p "$dir"/{bin,dev,proc,sys,tmp,etc,lib/vtice}
	install -m 0755 /bin/busybox "$dir/bin/busybox"
	install -m 0755 "$here/init.sh" "$dir/init"
	install -m 0755 "$(dirname "$img")/client/vtice-test" "$dir/bin/vtice-test"
	install -m 0644 "$msr" "$dir/lib/vtice/msr.ko"
	install -m 0644 "$cpuid" "$dir/lib/vtice/cpuid.ko"
	[[ -n "$ko" ]] && install -m 0644 "$ko" "$dir/lib/vtice/vtice.ko"
	for f in $guest_kos; do
		install -m 0644 "$f" "$dir/lib/vtice/$(basename "$f")"
	done
	[[ "$vtice_bin" != none ]] && copy_with_libs "$vtice_bin" "$dir"
	echo "$scenarios" > "$dir/etc/vtice-scenarios"
	printf '%s\n' $guest_env > "$dir/etc/vtice-env"	# run.sh --guest-env
	mkdir -p "$dir/etc/vtice-scenarios.d"
	for f in $extra_files; do
		n=$((n + 1))
		install -m 0644 "$f" "$dir/etc/vtice-scenarios.d/$n-$(basename "$(dirname "$f")").sh"
	done
	# An unprivileged user for the permission checks.
	printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' > "$dir/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' > "$dir/etc/group"
	# Uncompressed: Bochs unpacks it faster than it decompresses anything.
	(cd "$dir" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) > "$img"
	echo "run.sh: initramfs $(du -h "$img" | cut -f1)" >&2
}

# The kernel command line and why each option is there: docs/bochs-rig.md.
KERNEL_CMDLINE="quiet cryptomgr.notests mitigations=off rodata=off nokaslr \
initcall_blacklist=trace_eval_init,ftrace_check_for_weak_functions \
tsc_early_khz=50000 console=ttyS0,115200"

build_iso() {
	local dir=$1 iso=$2 kernel=$3 initrd=$4
	rm -rf "$dir" && mkdir -p "$dir"
	cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$dir/"
	cp "$kernel" "$dir/vmlinuz"
	cp "$initrd" "$dir/initrd.img"
	cat > "$dir/isolinux.cfg" <<CFG
DEFAULT vtice
PROMPT 0
TIMEOUT 0
LABEL vtice
  KERNEL /vmlinuz
  INITRD /initrd.img
  APPEND $KERNEL_CMDLINE${kernel_args:+ $kernel_args}
CFG
	xorriso -as mkisofs -quiet -o "$iso" -b isolinux.bin -c boot.cat \
		-no-emul-boot -boot-load-size 4 -boot-info-table "$dir" 2>/dev/null ||
		{ echo "run.sh: error: xorriso failed" >&2; exit 1; }
}

# The bochsrc lines that differ between Bochs 3.0 (our build: nogui, no
# sound) and Debian's 2.7 (no nogui; ALSA plugin unless sound is dummy).
bochsrc_display() {
	case "$1" in
	2.7) echo 'display_library: rfb, options="timeout=0"' ;;
	*) echo 'display_library: nogui' ;;
	esac
}
bochsrc_sound() {
	case "$1" in
	2.7) printf '%s\\n%s' 'sound: waveoutdrv=dummy, waveindrv=dummy, midioutdrv=dummy' 'speaker: enabled=0' ;;
	*) echo '# no sound: this build has none' ;;
	esac
}

write_bochsrc() {
	local template=$1 out=$2 cpus=$3 com2=$4 flavour=$5 model=${6:-corei7_skylake_x} com2_line="com2: enabled=0"
	[[ -n "$com2" ]] && com2_line="com2: enabled=1, mode=socket-client, dev=$com2"
	sed -e "s|@CPUS@|$cpus|" -e "s|@CPU_MODEL@|$model|" -e "s|@ISO@|$out/vtice.iso|" \
		-e "s|@SERIAL@|$out/serial.log|" -e "s|@BOCHSLOG@|$out/bochs.log|" \
		-e "s|@COM2@|$com2_line|" -e "s|@DISPLAY@|$(bochsrc_display "$flavour")|" \
		-e "s|@SOUND@|$(bochsrc_sound "$flavour")|" "$template" > "$out/bochsrc"
	echo c > "$out/bochs.cmd"
}
