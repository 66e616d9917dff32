// SPDX-License-Identifier: GPL-2.0
/*
 * Identity-mapped EPT: guest-physical == host-physical, read/write/execute
 * everywhere, each leaf typed by the MTRRs (SDM Vol. 3C 29.3). Large pages
 * (1 GiB if IA32_VMX_EPT_VPID_CAP[17], else 2 MiB) are used wherever the
 * MTRR type is uniform, smaller pages only where it is not (typically the
 * first 2 MiB, with its fixed-range MTRRs, and MMIO holes).
 */
#include "ept.h"
#include "os.h"
#include "vmx_defs.h"

#define VT_EPT_ENTRIES	512
#define VT_EPT_1G	(1ull << 30)
#define VT_EPT_2M	(1ull << 21)
#define VT_EPT_4K	(1ull << 12)
#define VT_EPT_512G	(1ull << 39)

static u64 *vt_ept_table_alloc(struct vt_ept *ept)
{
	u64 *t = vt_os_alloc_pages(1);

	if (t)
		ept->tables++;
	return t;
}

static u64 vt_ept_table_entry(const u64 *table)
{
	return vt_os_virt_to_phys(table) | VMX_EPT_RWX_MASK;
}

static u64 vt_ept_leaf_entry(u64 pa, u8 type, bool large)
{
	return pa | VMX_EPT_RWX_MASK | ((u64)type << VMX_EPT_MT_EPTE_SHIFT) |
	       (large ? VMX_EPT_LARGE_PAGE : 0);
}

static u64 *vt_ept_child(u64 entry)
{
	return vt_os_phys_to_virt(entry & VMX_EPT_ADDR_MASK);
}

static int vt_ept_fill_pt(struct vt_ept *ept, u64 *pde, u64 base)
{
	u64 *pt = vt_ept_table_alloc(ept);
	u32 i;

	if (!pt)
		return -VT_ENOMEM;
	for (i = 0; i < VT_EPT_ENTRIES; i++) {
		u64 pa = base + i * VT_EPT_4K;

		pt[i] = vt_ept_leaf_entry(pa, vt_mtrr_range_type(ept->mtrr, pa, VT_EPT_4K), false);
	}
	*pde = vt_ept_table_entry(pt);
	return 0;
}

static int vt_ept_fill_pd(struct vt_ept *ept, u64 *pdpte, u64 base)
{
	u64 *pd = vt_ept_table_alloc(ept);
	u32 i;
	int ret;

	if (!pd)
		return -VT_ENOMEM;
	*pdpte = vt_ept_table_entry(pd);
	for (i = 0; i < VT_EPT_ENTRIES; i++) {
		u64 pa = base + i * VT_EPT_2M;
		u8 type = vt_mtrr_range_type(ept->mtrr, pa, VT_EPT_2M);

		if (type != MTRR_TYPE_INVALID) {
			pd[i] = vt_ept_leaf_entry(pa, type, true);
			continue;
		}
		ret = vt_ept_fill_pt(ept, &pd[i], pa);
		if (ret)
			return ret;
	}
	return 0;
}

static int vt_ept_fill_pdpt(struct vt_ept *ept, u64 *pdpt, u64 start)
{
	u64 base, end = start + VT_EPT_512G;
	int ret;

	if (end > ept->top)
		end = ept->top;
	for (base = start; base < end; base += VT_EPT_1G) {
		u64 *e = &pdpt[(base / VT_EPT_1G) & 511];
		u8 type = vt_mtrr_range_type(ept->mtrr, base, VT_EPT_1G);

		if (ept->use_1g && type != MTRR_TYPE_INVALID) {
			*e = vt_ept_leaf_entry(base, type, true);
			continue;
		}
		ret = vt_ept_fill_pd(ept, e, base);
		if (ret)
			return ret;
	}
	return 0;
}

static int vt_ept_fill_pml4(struct vt_ept *ept)
{
	u64 base;
	int ret;

	for (base = 0; base < ept->top; base += VT_EPT_512G) {
		u64 *pdpt = vt_ept_table_alloc(ept);

		if (!pdpt)
			return -VT_ENOMEM;
		ept->pml4[base / VT_EPT_512G] = vt_ept_table_entry(pdpt);
		ret = vt_ept_fill_pdpt(ept, pdpt, base);
		if (ret)
			return ret;
	}
	return 0;
}

static int vt_ept_check_caps(u64 cap)
{
	/* 4-level walks, WB paging structures and 2 MiB pages: SDM Vol. 3D A.10 */
	if (!(cap & VMX_EPT_PAGE_WALK_4_BIT) || !(cap & VMX_EPTP_WB_BIT) ||
	    !(cap & VMX_EPT_2MB_PAGE_BIT))
		return -VT_EOPNOTSUPP;
	return 0;
}

int vt_ept_build(struct vt_ept *ept, u64 cap, const struct vt_mtrr_state *mtrr, u64 top)
{
	u32 i;
	int ret;

	vt_memset(ept, 0, sizeof(*ept));
	ret = vt_ept_check_caps(cap);
	if (ret)
		return ret;
	ept->mtrr = mtrr;
	ept->use_1g = cap & VMX_EPT_1GB_PAGE_BIT;
	/*
	 * Map all of the physical address space (MMIO included) so no device
	 * access ever faults: top = 2^MAXPHYADDR. Without 1 GiB pages that
	 * would cost 4 KiB of tables per GiB, so stop at 512 GiB then.
	 */
	if (!ept->use_1g && top > VT_EPT_512G)
		top = VT_EPT_512G;
	if (top == 0 || top > VT_EPT_512G * 512)
		top = VT_EPT_512G;
	ept->top = (top + VT_EPT_1G - 1) & ~(VT_EPT_1G - 1);
	ret = -VT_ENOMEM;
	ept->pml4 = vt_ept_table_alloc(ept);
	if (!ept->pml4)
		goto err;
	ret = vt_ept_fill_pml4(ept);
	if (ret)
		goto err;
	for (i = 0; i < VT_EPT_POOL_PAGES; i++) {
		ept->pool[i] = vt_os_alloc_pages(1);
		if (!ept->pool[i])
			goto err;
		ept->pool_left++;
	}
	/*
	 * EPTP: WB paging-structure type, 4-level walk (SDM 3C 25.6.11). EPT
	 * A/D flags stay off: nothing reads them, and with them on every read
	 * of a guest page table counts as a write (SDM 3C 29.3.3.2), so a write
	 * watchpoint on a page-table page would exit at every page walk.
	 */
	ept->eptp = vt_os_virt_to_phys(ept->pml4) | VMX_EPTP_MT_WB | VMX_EPTP_PWL_4;
	return 0;
err:
	vt_ept_free(ept);
	return -VT_ENOMEM;
}

static void vt_ept_free_table(u64 *table, int level)
{
	u32 i;

	for (i = 0; level > 1 && i < VT_EPT_ENTRIES; i++) {
		if ((table[i] & VMX_EPT_RWX_MASK) && !(table[i] & VMX_EPT_LARGE_PAGE))
			vt_ept_free_table(vt_ept_child(table[i]), level - 1);
	}
	vt_os_free_pages(table, 1);
}

void vt_ept_free(struct vt_ept *ept)
{
	u32 i;

	if (ept->pml4)
		vt_ept_free_table(ept->pml4, 4);
	for (i = 0; i < ept->pool_left; i++)
		vt_os_free_pages(ept->pool[i], 1);
	vt_memset(ept, 0, sizeof(*ept));
}

u64 *vt_ept_leaf(const struct vt_ept *ept, u64 gpa, int *level)
{
	u64 *table = ept->pml4;
	int lvl;

	if (!table || gpa >= ept->top)
		return NULL;
	for (lvl = 4; lvl >= 1; lvl--) {
		u64 *e = &table[(gpa >> (12 + 9 * (lvl - 1))) & 511];

		if (!(*e & VMX_EPT_RWX_MASK))
			return NULL;
		if (lvl == 1 || (lvl <= 3 && (*e & VMX_EPT_LARGE_PAGE))) {
			*level = lvl;
			return e;
		}
		table = vt_ept_child(*e);
	}
	return NULL;
}

/* Replace a large leaf by a table of 512 smaller leaves with its type and rights. */
static int vt_ept_split_one(struct vt_ept *ept, u64 *leaf, int level)
{
	u64 child_size = level == VT_EPT_LEVEL_PDPTE ? VT_EPT_2M : VT_EPT_4K;
	u64 keep = *leaf & ~VMX_EPT_ADDR_MASK;
	u64 base = *leaf & VMX_EPT_ADDR_MASK;
	u64 *table;
	u32 i;

	if (!ept->pool_left)
		return -VT_ENOMEM;
	table = ept->pool[--ept->pool_left];
	ept->pool[ept->pool_left] = NULL;
	if (level == VT_EPT_LEVEL_PDE)
		keep &= ~VMX_EPT_LARGE_PAGE;
	for (i = 0; i < VT_EPT_ENTRIES; i++)
		table[i] = (base + i * child_size) | keep;
	ept->tables++;
	/* A single aligned 8-byte store: other CPUs walk either the old or new. */
	VT_STORE_RELEASE(*leaf, vt_ept_table_entry(table));
	return 0;
}

int vt_ept_split_4k(struct vt_ept *ept, u64 gpa)
{
	int level, ret;
	u64 *leaf;

	for (;;) {
		leaf = vt_ept_leaf(ept, gpa, &level);
		if (!leaf)
			return -VT_EINVAL;
		if (level == VT_EPT_LEVEL_PTE)
			return 0;
		ret = vt_ept_split_one(ept, leaf, level);
		if (ret)
			return ret;
	}
}

int vt_ept_refill_pool(struct vt_ept *ept)
{
	while (ept->pool_left < VT_EPT_POOL_PAGES) {
		void *page = vt_os_alloc_pages(1);

		if (!page)
			return -VT_ENOMEM;
		ept->pool[ept->pool_left++] = page;
	}
	return 0;
}

static int vt_ept_walk_tables(const u64 *table, int level, int (*fn)(void *ctx, u64 pa),
			      void *ctx)
{
	u32 i;
	int ret = fn(ctx, vt_os_virt_to_phys(table));

	for (i = 0; !ret && level > 1 && i < VT_EPT_ENTRIES; i++) {
		if ((table[i] & VMX_EPT_RWX_MASK) && !(table[i] & VMX_EPT_LARGE_PAGE))
			ret = vt_ept_walk_tables(vt_ept_child(table[i]), level - 1, fn, ctx);
	}
	return ret;
}

int vt_ept_for_each_table(const struct vt_ept *ept, int (*fn)(void *ctx, u64 pa), void *ctx)
{
	u32 i;
	int ret = ept->pml4 ? vt_ept_walk_tables(ept->pml4, 4, fn, ctx) : 0;

	for (i = 0; !ret && i < ept->pool_left; i++)
		ret = fn(ctx, vt_os_virt_to_phys(ept->pool[i]));
	return ret;
}

/*
 * An entry is a leaf at level 1, or at level 2/3 with bit 7 set (SDM Vol. 3C
 * 29.3.2). A leaf whose rights were all taken away (an access watchpoint) is
 * still a leaf here: any nonzero entry below 'top' was written by us.
 */
static void vt_ept_audit_table(const u64 *table, int level, u64 base, struct vt_ept_audit *a)
{
	u64 size = 1ull << (12 + 9 * (level - 1));
	u32 i;

	for (i = 0; i < VT_EPT_ENTRIES; i++) {
		u64 e = table[i], gpa = base + i * size;

		if (!e)
			continue;
		if (level > 1 && !(e & VMX_EPT_LARGE_PAGE)) {
			vt_ept_audit_table(vt_ept_child(e), level - 1, gpa, a);
			continue;
		}
		a->leaves++;
		a->small_leaves += level == VT_EPT_LEVEL_PTE;
		if (e & VT_EPT_SHIELDED)
			a->shielded++;
		else if ((e & VMX_EPT_ADDR_MASK & ~(size - 1)) != gpa ||
		    (e & VMX_EPT_RWX_MASK) != VMX_EPT_RWX_MASK)
			a->off_identity++;
	}
}

void vt_ept_audit_identity(const struct vt_ept *ept, struct vt_ept_audit *audit)
{
	vt_memset(audit, 0, sizeof(*audit));
	if (ept->pml4)
		vt_ept_audit_table(ept->pml4, 4, 0, audit);
}
