// SPDX-License-Identifier: GPL-2.0
/*
 * A CPU's private view of the EPT: its own copy of the PML4 and of the
 * tables on the way to a few 4 KiB leaves it maps differently, every other
 * entry pointing at the shared tables (SDM Vol. 3C 29.3: each CPU walks the
 * hierarchy its VMCS's EPTP names, 25.6.11). A hook completes one
 * instruction on a page's real frame in such a view, so the other CPUs
 * keep the hook's view of that page meanwhile and never cache the real
 * frame.
 *
 * Translations cached for the view are tagged with its EPTP (SDM 3C
 * 29.4.1); the view's tables change between steps, so its user flushes
 * that EPTP after each rebuild.
 */
#include "ept.h"
#include "os.h"
#include "vmx_defs.h"

int vt_ept_view_alloc(struct vt_ept_view *v)
{
	u8 *block = vt_os_alloc_pages(VT_EPT_VIEW_TABLES);
	u32 i;

	vt_memset(v, 0, sizeof(*v));
	if (!block)
		return -VT_ENOMEM;
	v->block = block;
	for (i = 0; i < VT_EPT_VIEW_TABLES; i++) {
		v->table[i] = (u64 *)(block + i * VT_PAGE_SIZE);
		v->pa[i] = vt_os_virt_to_phys(v->table[i]);
	}
	return 0;
}

void vt_ept_view_free(struct vt_ept_view *v)
{
	if (v->block)
		vt_os_free_pages(v->block, VT_EPT_VIEW_TABLES);
	vt_memset(v, 0, sizeof(*v));
}

void vt_ept_view_reset(struct vt_ept_view *v, const struct vt_ept *shared)
{
	vt_memcpy(v->table[0], shared->pml4, VT_PAGE_SIZE);
	v->used = 1;
	/* The shared EPTP's memory type, walk length and A/D flag (bits 11:0). */
	v->eptp = v->pa[0] | (shared->eptp & ~VMX_EPT_ADDR_MASK);
}

/* The view's own copy of the table entry e points to, or NULL while it is the shared one. */
static u64 *vt_ept_view_own(const struct vt_ept_view *v, u64 e)
{
	u32 i;

	for (i = 1; i < v->used; i++)
		if (v->pa[i] == (e & VMX_EPT_ADDR_MASK))
			return v->table[i];
	return NULL;
}

int vt_ept_view_map(struct vt_ept_view *v, u64 gpa, u64 entry)
{
	u64 *table = v->table[0];
	int level;

	if (!v->used)
		return -VT_EINVAL;
	for (level = 4; level > VT_EPT_LEVEL_PTE; level--) {
		u64 *e = &table[(gpa >> (12 + 9 * (level - 1))) & 511];
		u64 *own;

		/* A hook's page is split to a 4 KiB leaf before it is hooked. */
		if (!(*e & VMX_EPT_RWX_MASK) || (level <= VT_EPT_LEVEL_PDPTE && (*e & VMX_EPT_LARGE_PAGE)))
			return -VT_EINVAL;
		own = vt_ept_view_own(v, *e);
		if (!own) {
			if (v->used == VT_EPT_VIEW_TABLES)
				return -VT_ENOSPC;
			own = v->table[v->used];
			vt_memcpy(own, vt_os_phys_to_virt(*e & VMX_EPT_ADDR_MASK), VT_PAGE_SIZE);
			*e = v->pa[v->used++] | (*e & ~VMX_EPT_ADDR_MASK);
		}
		table = own;
	}
	table[(gpa >> 12) & 511] = entry;
	return 0;
}
