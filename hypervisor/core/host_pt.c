// SPDX-License-Identifier: GPL-2.0
/* VMX root's private page tables (host_pt.h). */
#include "host_pt.h"
#include "hv.h"
#include "intrin.h"
#include "os.h"

#define VT_PT_ENTRIES	512

/* Level 1 is the PTE level; 4 or 5 is the top (PML4, PML5). */
static u32 vt_pt_shift(u32 level)
{
	return VT_PAGE_SHIFT + 9 * (level - 1);
}

static bool vt_pt_is_leaf(u64 entry, u32 level)
{
	return level == 1 || (entry & VT_PTE_LARGE);
}

static u64 *vt_pt_table(u64 entry)
{
	return vt_os_phys_to_virt(entry & VT_PTE_ADDR);
}

static const u64 *vt_kernel_top(void)
{
	return vt_pt_table(vt_read_cr3());
}

int vt_host_pt_init(struct vt_hv *hv)
{
	u64 *top = vt_os_alloc_pages(1);
	int ret;

	if (!top)
		return -VT_ENOMEM;
	hv->host_pml4 = top;
	hv->host_cr3 = vt_os_virt_to_phys(top);
	hv->host_levels = (vt_read_cr4() & X86_CR4_LA57) ? 5 : 4;
	ret = vt_window_init(&hv->window, top, vt_kernel_top(), hv->host_levels == 5);
	if (ret) {
		vt_os_free_pages(top, 1);
		hv->host_pml4 = NULL;
	}
	return ret;
}

/* Our table under *slot, made on first use with the kernel entry's flags. */
static int vt_pt_child(u64 *slot, u64 kernel_entry, u64 **child)
{
	if (!(*slot & VT_PTE_PRESENT)) {
		u64 *table = vt_os_alloc_pages(1);

		if (!table)
			return -VT_ENOMEM;
		*slot = vt_os_virt_to_phys(table) | (kernel_entry & ~VT_PTE_ADDR);
	}
	*child = vt_pt_table(*slot);
	return 0;
}

/*
 * Copy the kernel's leaf that maps va, making our tables down to it; *next
 * is the first address past that leaf, or past the hole va is in.
 */
static int vt_pt_mirror_one(struct vt_hv *hv, const u64 *kernel, u64 va, u64 *next)
{
	u64 *ours = hv->host_pml4;
	u32 level;
	int ret;

	for (level = hv->host_levels;; level--) {
		u64 size = 1ull << vt_pt_shift(level);
		u32 i = (u32)(va >> vt_pt_shift(level)) & (VT_PT_ENTRIES - 1);
		u64 entry = kernel[i];

		*next = (va & ~(size - 1)) + size;
		if (!(entry & VT_PTE_PRESENT))
			return 0;
		if (vt_pt_is_leaf(entry, level)) {
			ours[i] = entry;
			return 0;
		}
		ret = vt_pt_child(&ours[i], entry, &ours);
		if (ret)
			return ret;
		kernel = vt_pt_table(entry);
	}
}

int vt_host_pt_mirror(struct vt_hv *hv, u64 va, u64 len)
{
	const u64 *kernel = vt_kernel_top();
	u64 end = va + len, next;
	int ret;

	if (end < va)
		return -VT_EINVAL;
	for (va &= ~(u64)(VT_PAGE_SIZE - 1); va < end; va = next) {
		ret = vt_pt_mirror_one(hv, kernel, va, &next);
		if (ret)
			return ret;
		if (next == 0)
			break;		/* past the top of the address space */
	}
	return 0;
}

/* fn on every table of ours below table (children first), then on table. */
static int vt_pt_walk(struct vt_hv *hv, u64 *table, u32 level, int (*fn)(struct vt_hv *hv, u64 *table))
{
	u32 i;
	int ret;

	for (i = 0; i < VT_PT_ENTRIES; i++) {
		u64 entry = table[i];

		if (!(entry & VT_PTE_PRESENT) || vt_pt_is_leaf(entry, level))
			continue;
		if (level == hv->host_levels && vt_pt_table(entry) == hv->window.tables[0])
			continue;	/* the window's: host_window.c owns them */
		ret = vt_pt_walk(hv, vt_pt_table(entry), level - 1, fn);
		if (ret)
			return ret;
	}
	return fn(hv, table);
}

static int vt_pt_free_table(struct vt_hv *hv __attribute__((unused)), u64 *table)
{
	vt_os_free_pages(table, 1);
	return 0;
}

/* The walk tells the window's tables by their address: free them last. */
void vt_host_pt_fini(struct vt_hv *hv)
{
	if (hv->host_pml4)
		vt_pt_walk(hv, hv->host_pml4, hv->host_levels, vt_pt_free_table);
	vt_window_fini(&hv->window);
	hv->host_pml4 = NULL;
	hv->host_cr3 = 0;
}

static int vt_pt_hide_table(struct vt_hv *hv, u64 *table)
{
	return vt_hv_hide(hv, table, 1);
}

int vt_host_pt_hide(struct vt_hv *hv)
{
	u32 i;
	int ret = vt_pt_walk(hv, hv->host_pml4, hv->host_levels, vt_pt_hide_table);

	for (i = 0; !ret && i < hv->window.levels; i++)
		ret = vt_hv_hide(hv, hv->window.tables[i], 1);
	return ret;
}
