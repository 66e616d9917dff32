// SPDX-License-Identifier: GPL-2.0
/*
 * What the shield (core/shield.h) covers in the Linux module, once at load
 * and before any CPU is virtualized:
 * - hidden behind the decoy: every CPU's VMXON region, VMCS, MSR bitmap
 *   and host stack, the host top-level table and window tables, the I/O
 *   bitmaps, the debugger's page-allocated tables and split-view shadows,
 *   and last the EPT tables themselves;
 * - copied: the module's code and read-only data, struct vt_hv, every
 *   struct vt_vcpu and the debugger's root state in .bss. The kernel keeps running the module's guest-side code
 *   (ioctls, hotplug, init and exit) and reading hv's key and capabilities
 *   from its copies, and whatever it writes there (a kprobe, a text_poke,
 *   an attack) never reaches the originals that VMX root uses.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/io.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "vtice_linux.h"
#include "../../debug/path_trace.h"
#include "../../debug/dbg_os.h"
#include "../../debug/stub.h"

static int vt_copy_vmalloc_range(unsigned long base, unsigned long size)
{
	unsigned long va;
	int ret;

	for (va = base & PAGE_MASK; va < base + size; va += PAGE_SIZE) {
		struct page *page = vmalloc_to_page((void *)va);

		if (!page)
			return -EFAULT;
		ret = vt_shield_copy(&vt_mod.hv->shield, &vt_mod.hv->ept, page_to_phys(page));
		if (ret)
			return ret;
	}
	return 0;
}

/* The debugger's root state, in the module's .bss (debug/dbg_os.h). */
int vt_os_shield_image(const void *p, u64 bytes)
{
	return vt_copy_vmalloc_range((unsigned long)p, bytes);
}

/* The module's text and read-only data (os/linux/compat.h). */
static int vt_shield_module_image(void)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < VT_MODULE_RO_RANGES; i++) {
		struct vt_module_range r = vt_module_ro_range(THIS_MODULE, i);

		if (r.size)
			ret = vt_copy_vmalloc_range(r.base, r.size);
	}
	return ret;
}

static int vt_shield_vcpus(void)
{
	unsigned int cpu;
	int ret;

	for_each_possible_cpu(cpu) {
		ret = vt_vcpu_shield(vt_mod.vcpu_state[cpu]);
		if (ret)
			return ret;
	}
	return 0;
}

int vt_linux_shield(void)
{
	struct vt_shield *s = &vt_mod.hv->shield;
	int ret;

	ret = vt_hv_shield_own_pages(vt_mod.hv);
	if (!ret)
		ret = vt_shield_vcpus();
	if (!ret)
		ret = vt_stub_shield();
	if (!ret)
		ret = vt_path_shield();
	if (!ret)
		ret = vt_linux_shield_memory_map();
	if (!ret)
		ret = vt_shield_module_image();
	if (!ret)
		ret = vt_shield_hide_ept(s, &vt_mod.hv->ept);
	if (!ret)
		vt_note("shield: %u pages hidden, %u pages copied (module image and state), %u EPT tables\n",
			s->hidden, s->nr_copies, vt_mod.hv->ept.tables);
	return ret;
}
