// SPDX-License-Identifier: GPL-2.0
/*
 * Global hypervisor state shared by all vCPUs: capabilities, controls, the
 * identity EPT, the host page tables and the VMCALL key.
 */
#include "hv.h"
#include "intrin.h"
#include "os.h"
#include <vtice/ioctl.h>

/*
 * Host CR3. The CR3 current at load time may belong to a user process that
 * later exits and frees its page tables, so VM exits must not use it. The
 * kernel half of every x86-64 page table (top-level entries 256-511) is the
 * same shared set of lower-level tables, populated at boot and never
 * replaced: a private top-level page with copies of those entries maps the
 * whole kernel (direct map, vmalloc, modules, per-CPU) for as long as the
 * kernel runs. Works for 4- and 5-level paging alike.
 */
static int vt_host_page_table(struct vt_hv *hv)
{
	u64 *cur = vt_os_phys_to_virt(vt_read_cr3() & VMX_EPT_ADDR_MASK);
	u64 *top = vt_os_alloc_pages(1);
	u32 i;

	if (!top)
		return -VT_ENOMEM;
	for (i = 256; i < 512; i++)
		top[i] = cur[i];
	hv->host_pml4 = top;
	hv->host_cr3 = vt_os_virt_to_phys(top);
	return 0;
}

static u64 vt_phys_top(void)
{
	struct vt_cpuid_regs r;

	vt_cpuid(0x80000000, 0, &r);
	if (r.eax < 0x80000008)
		return 1ull << 36;
	vt_cpuid(0x80000008, 0, &r);
	return 1ull << (r.eax & 0xff);
}

int vt_hv_init(struct vt_hv *hv, u64 ept_top)
{
	int ret;

	vt_memset(hv, 0, sizeof(*hv));
	ret = vt_caps_read(&hv->caps);
	if (ret)
		return ret;
	ret = vt_compute_controls(&hv->caps, &hv->ctls);
	if (ret)
		return ret;
	vt_mtrr_read(&hv->mtrr);
	ret = vt_ept_build(&hv->ept, hv->caps.ept_vpid, &hv->mtrr, ept_top ? ept_top : vt_phys_top());
	if (ret) {
		vt_err("cannot build the identity EPT (%d)\n", ret);
		return ret;
	}
	ret = vt_shield_init(&hv->shield);
	if (ret)
		goto err_ept;
	ret = vt_host_page_table(hv);
	if (ret)
		goto err_ept;
	ret = vt_window_init(&hv->window, hv->host_pml4, vt_read_cr4() & X86_CR4_LA57);
	if (ret)
		goto err_host;
	do
		hv->key = vt_os_random_u64();
	while (hv->key == 0);
	return 0;
err_host:
	vt_os_free_pages(hv->host_pml4, 1);
	hv->host_pml4 = NULL;
err_ept:
	vt_ept_free(&hv->ept);
	vt_shield_fini(&hv->shield);
	return ret;
}

void vt_hv_fini(struct vt_hv *hv)
{
	vt_ept_free(&hv->ept);
	vt_shield_fini(&hv->shield);
	vt_window_fini(&hv->window);
	if (hv->io_bitmap)
		vt_os_free_pages(hv->io_bitmap, 2);
	hv->io_bitmap = NULL;
	if (hv->host_pml4)
		vt_os_free_pages(hv->host_pml4, 1);
	hv->host_pml4 = NULL;
	hv->key = 0;
}

int vt_hv_hide(struct vt_hv *hv, const void *p, u32 pages)
{
	return vt_shield_hide(&hv->shield, &hv->ept, vt_os_virt_to_phys(p), pages);
}

int vt_hv_copy(struct vt_hv *hv, const void *p, u32 pages)
{
	u64 pa = vt_os_virt_to_phys(p);
	u32 i;
	int ret = 0;

	for (i = 0; !ret && i < pages; i++)
		ret = vt_shield_copy(&hv->shield, &hv->ept, pa + i * VT_PAGE_SIZE);
	return ret;
}

/*
 * The kernel keeps reading hv's key and capabilities from its copy; VMX
 * root's callbacks pointer and EPT state are in the original, which the
 * kernel cannot reach.
 */
int vt_hv_shield_own_pages(struct vt_hv *hv)
{
	u32 i;
	int ret = vt_hv_hide(hv, hv->host_pml4, 1);

	for (i = 0; !ret && i < hv->window.levels; i++)
		ret = vt_hv_hide(hv, hv->window.tables[i], 1);
	if (!ret && hv->io_bitmap)
		ret = vt_hv_hide(hv, hv->io_bitmap, 2);
	if (!ret)
		ret = vt_hv_copy(hv, hv, VT_HV_PAGES);
	return ret;
}

int vt_hv_set_ram(struct vt_hv *hv, const struct vt_ram_range *ram, u32 n)
{
	if (n > VT_MAX_RAM)
		return -VT_EINVAL;
	vt_memcpy(hv->ram, ram, n * sizeof(*ram));
	hv->mem.ram = hv->ram;
	hv->mem.nr_ram = n;
	return 0;
}

void vt_hv_set_callbacks(struct vt_hv *hv, const struct vt_callbacks *cb)
{
	__atomic_store_n(&hv->cb, cb, __ATOMIC_RELEASE);
}

/* A control the capability MSR allows to be 1 (SDM Vol. 3D A.3-A.5). */
static bool vt_may_set(u64 cap_msr, u32 bits)
{
	return ((u32)(cap_msr >> 32) & bits) == bits;
}

/*
 * I/O bitmap A covers ports 0-0x7fff, B 0x8000-0xffff; a set bit makes
 * IN/OUT/INS/OUTS on that port exit (SDM Vol. 3C 25.1.3, 25.6.4).
 */
int vt_hv_intercept_ports(struct vt_hv *hv, u16 first, u16 count)
{
	u32 port;

	if (!vt_may_set(hv->caps.proc, CPU_BASED_USE_IO_BITMAPS))
		return -VT_EOPNOTSUPP;
	if (!hv->io_bitmap) {
		hv->io_bitmap = vt_os_alloc_pages(2);
		if (!hv->io_bitmap)
			return -VT_ENOMEM;
	}
	for (port = first; port < (u32)first + count && port <= 0xffff; port++)
		hv->io_bitmap[port / 8] |= 1u << (port % 8);
	hv->ctls.proc |= CPU_BASED_USE_IO_BITMAPS;
	return 0;
}

/* Every exception can be intercepted (SDM 3C 25.2): nothing to check. */
void vt_hv_intercept_exceptions(struct vt_hv *hv, u32 mask)
{
	hv->ctls.exceptions |= mask;
}

/*
 * NMI exiting, with virtual NMIs so the guest's own NMIs can be held while
 * it blocks them and delivered through an NMI window (SDM 3C 25.3, 26.7.1).
 */
int vt_hv_enable_nmi_exiting(struct vt_hv *hv)
{
	u32 pin = PIN_BASED_NMI_EXITING | PIN_BASED_VIRTUAL_NMIS;

	if (!vt_may_set(hv->caps.pin, pin) ||
	    !vt_may_set(hv->caps.proc, CPU_BASED_NMI_WINDOW_EXITING))
		return -VT_EOPNOTSUPP;
	hv->ctls.pin |= pin;
	return 0;
}

/*
 * The timer counts down by one each time TSC bit N changes, N from
 * IA32_VMX_MISC[4:0] (SDM 3C 26.5.1). Saving its value on exit keeps the
 * period independent of how often other exits happen (25.7.1).
 */
int vt_hv_enable_preempt_timer(struct vt_hv *hv, u64 period_tsc)
{
	u64 ticks = period_tsc >> hv->caps.preempt_timer_shift;

	if (!vt_may_set(hv->caps.pin, PIN_BASED_VMX_PREEMPTION_TIMER))
		return -VT_EOPNOTSUPP;
	if (ticks == 0 || ticks > 0xffffffffull)
		return -VT_EINVAL;
	hv->ctls.pin |= PIN_BASED_VMX_PREEMPTION_TIMER;
	if (vt_may_set(hv->caps.exit, VM_EXIT_SAVE_VMX_PREEMPTION_TIMER))
		hv->ctls.exit |= VM_EXIT_SAVE_VMX_PREEMPTION_TIMER;
	hv->preempt_ticks = ticks;
	return 0;
}
