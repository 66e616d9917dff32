// SPDX-License-Identifier: GPL-2.0
/*
 * The shield (shield.h): a shielded frame's 4 KiB EPT leaf keeps its memory
 * type and full rights but points at another frame (an EPT leaf may map any
 * host-physical address, SDM Vol. 3C 29.3.2), and carries VT_EPT_SHIELDED.
 *
 * Why a decoy and not a fault: a leaf without rights would make every guest
 * touch of those frames an EPT violation, which a hostile kernel could use
 * to probe for the hypervisor page by page, and which costs exits; the
 * decoy answers like ordinary memory and costs none. It is shared, so a
 * guest that writes one hidden frame sees the bytes in every other: that
 * says "something odd maps here", never what the hypervisor holds.
 */
#include "shield.h"
#include "os.h"
#include "vmx_defs.h"

int vt_shield_init(struct vt_shield *s)
{
	vt_memset(s, 0, sizeof(*s));
	s->decoy = vt_os_alloc_pages(1);
	s->copies = vt_os_alloc_pages(VT_SHIELD_COPY_TABLE_PAGES);
	s->copied_gpa = vt_os_alloc_pages(VT_SHIELD_COPY_TABLE_PAGES);
	if (!s->decoy || !s->copies || !s->copied_gpa) {
		vt_shield_fini(s);
		return -VT_ENOMEM;
	}
	s->decoy_pa = vt_os_virt_to_phys(s->decoy);
	return 0;
}

void vt_shield_fini(struct vt_shield *s)
{
	u32 i;

	for (i = 0; i < s->nr_copies; i++)
		vt_os_free_pages(s->copies[i], 1);
	if (s->copies)
		vt_os_free_pages(s->copies, VT_SHIELD_COPY_TABLE_PAGES);
	if (s->copied_gpa)
		vt_os_free_pages(s->copied_gpa, VT_SHIELD_COPY_TABLE_PAGES);
	if (s->decoy)
		vt_os_free_pages(s->decoy, 1);
	vt_memset(s, 0, sizeof(*s));
}

/* The 4 KiB leaf of gpa, split off its large page; the pool is topped up again. */
static int vt_shield_leaf(struct vt_ept *ept, u64 gpa, u64 **leaf)
{
	int level, ret;

	ret = vt_ept_split_4k(ept, gpa);
	if (!ret)
		ret = vt_ept_refill_pool(ept);
	if (ret)
		return ret;
	*leaf = vt_ept_leaf(ept, gpa, &level);
	return *leaf && level == VT_EPT_LEVEL_PTE ? 0 : -VT_EINVAL;
}

static void vt_shield_redirect(u64 *leaf, u64 frame)
{
	*leaf = frame | (*leaf & ~VMX_EPT_ADDR_MASK) | VT_EPT_SHIELDED;
}

u64 vt_shield_seen_pa(const struct vt_ept *ept, u64 gpa)
{
	int level;
	const u64 *leaf = ept->pml4 ? vt_ept_leaf(ept, gpa, &level) : NULL;
	u64 entry = leaf ? VT_READ_ONCE(*leaf) : 0;

	if (!(entry & VT_EPT_SHIELDED))
		return gpa;
	return (entry & VMX_EPT_ADDR_MASK) | (gpa & (VT_PAGE_SIZE - 1));
}

int vt_shield_hide(struct vt_shield *s, struct vt_ept *ept, u64 pa, u32 pages)
{
	u32 i;

	if (!VT_ALIGNED(pa, VT_PAGE_SIZE))
		return -VT_EINVAL;
	for (i = 0; i < pages; i++) {
		u64 *leaf;
		int ret = vt_shield_leaf(ept, pa + i * VT_PAGE_SIZE, &leaf);

		if (ret)
			return ret;
		if (*leaf & VT_EPT_SHIELDED)
			continue;
		vt_shield_redirect(leaf, s->decoy_pa);
		s->hidden++;
	}
	return 0;
}

int vt_shield_copy(struct vt_shield *s, struct vt_ept *ept, u64 pa)
{
	void *copy;
	u64 *leaf;
	int ret;

	if (!VT_ALIGNED(pa, VT_PAGE_SIZE))
		return -VT_EINVAL;
	ret = vt_shield_leaf(ept, pa, &leaf);
	if (ret)
		return ret;
	if (*leaf & VT_EPT_SHIELDED)
		return 0;
	if (s->nr_copies == VT_SHIELD_MAX_COPIES)
		return -VT_ENOSPC;
	copy = vt_os_alloc_pages(1);
	if (!copy)
		return -VT_ENOMEM;
	vt_memcpy(copy, vt_os_phys_to_virt(pa), VT_PAGE_SIZE);
	s->copied_gpa[s->nr_copies] = pa;
	s->copies[s->nr_copies++] = copy;
	vt_shield_redirect(leaf, vt_os_virt_to_phys(copy));
	return 0;
}

void vt_shield_retire_copies(struct vt_shield *s, struct vt_ept *ept)
{
	u32 i;

	for (i = 0; i < s->nr_copies; i++) {
		int level;
		u64 *leaf = vt_ept_leaf(ept, s->copied_gpa[i], &level);

		if (leaf && (*leaf & VT_EPT_SHIELDED) && (*leaf & VMX_EPT_ADDR_MASK) != s->decoy_pa) {
			vt_shield_redirect(leaf, s->decoy_pa);
			s->hidden++;
		}
		vt_memset(s->copies[i], 0, VT_PAGE_SIZE);
	}
}

/* The EPT's table pages as one pass found them. */
struct vt_table_list {
	u64 *pa;
	u32 n, max;
};

static int vt_count_table(void *ctx, u64 pa)
{
	(void)pa;
	((struct vt_table_list *)ctx)->max++;
	return 0;
}

static int vt_collect_table(void *ctx, u64 pa)
{
	struct vt_table_list *list = ctx;

	if (list->n == list->max)
		return -VT_ENOSPC;
	list->pa[list->n++] = pa;
	return 0;
}

/* One pass: hide the tables as they are now (hiding may split off new ones). */
static int vt_shield_hide_ept_pass(struct vt_shield *s, struct vt_ept *ept)
{
	struct vt_table_list list = { 0 };
	u32 pages, i;
	int ret;

	vt_ept_for_each_table(ept, vt_count_table, &list);
	pages = VT_PAGES_FOR(list.max * sizeof(u64));
	list.pa = vt_os_alloc_pages(pages);
	if (!list.pa)
		return -VT_ENOMEM;
	ret = vt_ept_for_each_table(ept, vt_collect_table, &list);
	for (i = 0; !ret && i < list.n; i++)
		ret = vt_shield_hide(s, ept, list.pa[i], 1);
	vt_os_free_pages(list.pa, pages);
	return ret;
}

int vt_shield_hide_ept(struct vt_shield *s, struct vt_ept *ept)
{
	u32 before;
	int ret;

	do {
		before = s->hidden;
		ret = vt_shield_hide_ept_pass(s, ept);
	} while (!ret && s->hidden != before);
	return ret;
}
