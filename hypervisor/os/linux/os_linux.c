// SPDX-License-Identifier: GPL-2.0
/* The OS interface of the portable core (core/os.h), for Linux. */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <linux/random.h>
#include <asm/asm.h>
#include <asm/desc.h>
#include <asm/msr.h>

#include "../../core/os.h"
#include "../../core/vmx_status.h"
#include "../../debug/dbg_os.h"
#include "vtice_linux.h"

static unsigned int vt_order(u32 count)
{
	return get_order((size_t)count * PAGE_SIZE);
}

void *vt_os_alloc_pages(u32 count)
{
	struct page *page = alloc_pages(GFP_KERNEL | __GFP_ZERO, vt_order(count));

	return page ? page_address(page) : NULL;
}

void vt_os_free_pages(void *p, u32 count)
{
	if (p)
		__free_pages(virt_to_page(p), vt_order(count));
}

u64 vt_os_random_u64(void)
{
	return get_random_u64();
}

void vt_os_reload_tr(void)
{
	force_reload_TR();
}

void vt_os_log(int level, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	switch (level) {
	case VT_LOG_ERR:
		pr_err("%pV", &vaf);
		break;
	case VT_LOG_WARN:
		vt_note_warn("%pV", &vaf);
		break;
	case VT_LOG_INFO:
		vt_note("%pV", &vaf);
		break;
	default:
		/*
		 * Nothing: pr_debug would list the module's call site in
		 * the kernel's dynamic_debug/control, even in a stealth load.
		 */
		break;
	}
	va_end(args);
}

/*
 * core/intrin.h. A hypervisor already below the kernel makes VMXON fault:
 * another VMM that hides VMX, or a vtice loaded with stealth=1, whose
 * persona holds VMX (#GP). The fixup turns that into VT_VMX_FAULT and the
 * load is refused, where the fault would otherwise be an oops with
 * interrupts off in the CPU hotplug thread (found by the hvstealth rig).
 */
int vt_vmxon(u64 pa);	/* core/intrin.h, which the kernel's headers clash with */
int vt_vmxon(u64 pa)
{
	int faulted = 1;
	u8 cf = 0, zf = 0;

	asm volatile("1: vmxon %[pa]\n\t"
		     "setc %[cf]\n\t"
		     "setz %[zf]\n\t"
		     "xor %k[f], %k[f]\n"
		     "2:\n"
		     _ASM_EXTABLE(1b, 2b)
		     : [f] "+r"(faulted), [cf] "+qm"(cf), [zf] "+qm"(zf)
		     : [pa] "m"(pa)
		     : "memory", "cc");
	return faulted ? VT_VMX_FAULT : VT_VMX_STATUS(cf, zf);
}
