// SPDX-License-Identifier: GPL-2.0
/*
 * Global hypervisor state shared by all vCPUs: capabilities, controls, the
 * identity EPT, the host page tables and the VMCALL key.
 */
#include "exit.h"
#include "host_pt.h"
#include "hv.h"
#include "intrin.h"
#include "os.h"
#include "root_idt.h"
#include <vtice/ioctl.h>

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
	hv->parent = vt_find_parent();
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
	ret = vt_host_pt_init(hv);
	if (ret)
		goto err_ept;
	ret = vt_root_idt_init(hv);
	if (ret)
		goto err_host;
	do
		hv->key = vt_os_random_u64();
	while (hv->key == 0);
	return 0;
err_host:
	vt_host_pt_fini(hv);
err_ept:
	vt_ept_free(&hv->ept);
	vt_shield_fini(&hv->shield);
	return ret;
}

void vt_hv_fini(struct vt_hv *hv)
{
	vt_ept_free(&hv->ept);
	vt_shield_fini(&hv->shield);
	if (hv->io_bitmap)
		vt_os_free_pages(hv->io_bitmap, 2);
	hv->io_bitmap = NULL;
	vt_host_pt_fini(hv);
	vt_root_idt_fini(hv);
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
	int ret = vt_host_pt_hide(hv);

	if (!ret)
		ret = vt_hv_hide(hv, hv->root_idt, 1);
	if (!ret && hv->io_bitmap)
		ret = vt_hv_hide(hv, hv->io_bitmap, 2);
	/* which frames are copies, and where: nothing the guest needs to read */
	if (!ret)
		ret = vt_hv_hide(hv, hv->shield.copies, VT_SHIELD_COPY_TABLE_PAGES);
	if (!ret)
		ret = vt_hv_hide(hv, hv->shield.copied_gpa, VT_SHIELD_COPY_TABLE_PAGES);
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

/*
 * Drop this CPU's cached translations of our EPT after a change to it.
 * Single-context where the CPU has it, else all-context: a CPU may offer
 * either type alone (IA32_VMX_EPT_VPID_CAP bits 25 and 26, SDM Vol. 3D
 * A.10), and an unsupported type fails with VMfailValid (SDM Vol. 3C 31.3,
 * INVEPT), which would leave the stale entry in place.
 */
void vt_hv_invept_eptp(const struct vt_hv *hv, u64 eptp)
{
	if (hv->caps.flags & VTICE_CAP_INVEPT_SINGLE)
		vt_invept(VMX_EPT_EXTENT_CONTEXT, eptp);
	else
		vt_invept(VMX_EPT_EXTENT_GLOBAL, 0);
}

void vt_hv_invept_local(const struct vt_hv *hv)
{
	vt_hv_invept_eptp(hv, hv->ept.eptp);
}

/* A control the capability MSR allows to be 1 (SDM Vol. 3D A.3-A.5). */
bool vt_may_set(u64 cap_msr, u32 bits)
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
