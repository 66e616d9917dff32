// SPDX-License-Identifier: GPL-2.0
/*
 * The ranges VMX root's private page tables (core/host_pt.h) take from the
 * kernel's at load, before any CPU is virtualized. Root dereferences only:
 * - the direct map: its own page-allocated state, the kernel-allocated
 *   arrays it was handed, and every page vt_os_alloc_pages gives it later
 *   (the EPT's split pool): up to the end of the highest RAM range;
 * - the module image: code, read-only data, data and .bss;
 * - the user-mapped rings (vmalloc).
 * Guest memory it reads through its own window (core/host_window.c), and
 * the kernel's per-CPU data, stacks and the rest of vmalloc not at all.
 * RAM hot-added after load is not in root's tables.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/mm.h>
#include <linux/module.h>
#include <linux/version.h>

#include "compat.h"
#include "vtice_linux.h"
#include "../../core/host_pt.h"

static int vt_mirror(const void *p, unsigned long bytes)
{
	return vt_host_pt_mirror(vt_mod.hv, (u64)(unsigned long)p, bytes);
}

static int vt_mirror_module_image(void)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < VT_MODULE_RANGES; i++) {
		struct vt_module_range r = vt_module_range(THIS_MODULE, i);

		ret = vt_mirror((const void *)r.base, r.size);
	}
	return ret;
}

int vt_linux_host_tables(void)
{
	unsigned int cpu;
	int ret;

	ret = vt_host_pt_mirror(vt_mod.hv, PAGE_OFFSET, vt_linux_ram_top());
	if (!ret)
		ret = vt_mirror_module_image();
	for_each_possible_cpu(cpu) {
		if (ret)
			break;
		ret = vt_mirror(vt_mod.rings[cpu], vt_mod.ring_bytes);
	}
	return ret;
}
