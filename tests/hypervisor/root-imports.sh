#!/usr/bin/env bash
# VMX root runs none of the kernel's code (docs/hypervisor.md,
# "Self-protection"). Checks a built module tree: the objects VMX root runs
# (core/, debug/ and os/linux/root_os.c, as linked: their .root.o, whose
# thunk references Kbuild renamed to root's own; root's thunks; and the
# entry stubs) import no kernel
# symbol at all, and of the OS layer they call only the functions listed
# below, each of which runs before VMX root exists or after it is gone.
# Usage: root-imports.sh HYPERVISOR_DIR (a tree where kbuild built vtice.ko)
set -euo pipefail

dir=${1:?usage: root-imports.sh HYPERVISOR_DIR}
[[ -f "$dir/vtice.ko" ]] || { echo "root-imports: $dir/vtice.ko: not built" >&2; exit 1; }
cd "$dir"

shopt -s nullglob
root_objs=(core/*.root.o debug/*.root.o os/linux/root_os.root.o os/linux/root_entry.o os/linux/vmx_entry.o
	os/linux/root_thunks.o)
for o in "${root_objs[@]}"; do
	[[ -f $o ]] || { echo "root-imports: $dir/$o: missing (not a complete module build)" >&2; exit 1; }
done

# OS-layer functions root's objects call outside VMX root, and why that holds.
declare -A outside_root=(
	[vt_os_alloc_pages]="allocation at load and while the debugger attaches (may sleep)"
	[vt_os_free_pages]="at unload"
	[vt_os_log]="load-time messages; root reports through root_log.h"
	[vt_os_random_u64]="the VMCALL key, at load"
	[vt_os_shield_image]="setting the shield up, at load"
	[vt_os_tsc_khz]="read at load (the stub's poll period, the all-stop's TSC rate)"
	[vt_os_reload_tr]="after VMXOFF, with the kernel's GDT back"
	[vt_vmxon]="bring-up, in the kernel's context (its fixup turns a fault into a refused load)"
)

# Kernel symbols an object may use where the kernel, not VMX root, runs it.
declare -A kernel_ok=(
	[os/linux/root_entry.o:ex_handler_default]="5.10's exception-table entries name their handler; the kernel, not root, reads the table"
)

fail=0
defined=$(nm --defined-only -g "${root_objs[@]}" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u)
while read -r obj sym; do
	if [[ $sym != vt_* ]]; then
		if [[ -n ${kernel_ok[$obj:$sym]:-} ]]; then
			echo "ok   $obj uses the kernel's $sym: ${kernel_ok[$obj:$sym]}"
		else
			echo "FAIL $obj imports the kernel's $sym"
			fail=1
		fi
	elif ! grep -qx "$sym" <<<"$defined"; then
		if [[ -n ${outside_root[$sym]:-} ]]; then
			echo "ok   $obj calls $sym: ${outside_root[$sym]}"
		else
			echo "FAIL $obj calls $sym, outside root's objects and not listed as load-time only"
			fail=1
		fi
	fi
done < <(for o in "${root_objs[@]}"; do nm -u "$o" | awk -v o="$o" '{print o, $2}'; done)

[[ $fail == 0 ]] && echo "root-imports: ${#root_objs[@]} objects VMX root runs import no kernel symbol"
exit $fail
