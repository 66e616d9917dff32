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
	ret = vt_host_page_table(hv);
	if (ret)
		goto err_ept;
	do
		hv->key = vt_os_random_u64();
	while (hv->key == 0);
	return 0;
err_ept:
	vt_ept_free(&hv->ept);
	return ret;
}

void vt_hv_fini(struct vt_hv *hv)
{
	vt_ept_free(&hv->ept);
	if (hv->host_pml4)
		vt_os_free_pages(hv->host_pml4, 1);
	hv->host_pml4 = NULL;
	hv->key = 0;
}

void vt_hv_set_callbacks(struct vt_hv *hv, const struct vt_callbacks *cb)
{
	__atomic_store_n(&hv->cb, cb, __ATOMIC_RELEASE);
}
