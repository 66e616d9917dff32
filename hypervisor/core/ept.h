/* SPDX-License-Identifier: GPL-2.0 */
/* Identity EPT and the MTRR snapshot that gives its memory types. */
#ifndef VT_CORE_EPT_H
#define VT_CORE_EPT_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VT_MTRR_MAX_VAR		32
#define VT_MTRR_FIXED_COUNT	88	/* 8 x 64K + 16 x 16K + 64 x 4K below 1 MiB */
#define VT_MTRR_FIXED_END	0x100000ull

struct vt_mtrr_var {
	u64 base;	/* IA32_MTRR_PHYSBASEn, type in bits 7:0 */
	u64 mask;	/* IA32_MTRR_PHYSMASKn, valid in bit 11 */
};

/* MTRRs as read on the boot CPU, SDM Vol. 3A 11.11. */
struct vt_mtrr_state {
	bool supported;
	u64 def_type;		/* IA32_MTRR_DEF_TYPE */
	u64 cap;		/* IA32_MTRRCAP */
	u64 phys_mask;		/* bits maxphyaddr-1 : 12 */
	u32 nr_var;
	struct vt_mtrr_var var[VT_MTRR_MAX_VAR];
	u8 fixed[VT_MTRR_FIXED_COUNT];
};

void vt_mtrr_read(struct vt_mtrr_state *s);
/*
 * Type of [base, base + size) (size a power of two, base aligned to it),
 * or MTRR_TYPE_INVALID when the range mixes types and must be split.
 */
u8 vt_mtrr_range_type(const struct vt_mtrr_state *s, u64 base, u64 size);

#define VT_EPT_POOL_PAGES	32	/* tables for splits made in VMX root */
#define VT_EPT_LEVEL_PTE	1
#define VT_EPT_LEVEL_PDE	2
#define VT_EPT_LEVEL_PDPTE	3
/*
 * Bit 11 of an EPT leaf is ignored by the CPU in every format (SDM Vol. 3C
 * Tables 29-4 to 29-6): it marks the leaves the shield (shield.h) points
 * away from their own frame, so no hook ever takes one over.
 */
#define VT_EPT_SHIELDED		VT_BIT(11)

struct vt_ept {
	u64 *pml4;
	u64 eptp;
	u64 top;		/* identity-mapped up to here */
	bool use_1g;
	u32 tables;		/* table pages in use, for the log and tests */
	void *pool[VT_EPT_POOL_PAGES];
	u32 pool_left;
	const struct vt_mtrr_state *mtrr;
};

int vt_ept_build(struct vt_ept *ept, u64 ept_vpid_cap, const struct vt_mtrr_state *mtrr,
		 u64 top);
void vt_ept_free(struct vt_ept *ept);
/* The leaf entry mapping gpa and its level, or NULL if unmapped. */
u64 *vt_ept_leaf(const struct vt_ept *ept, u64 gpa, int *level);
/*
 * Split the large page mapping gpa down to 4 KiB (no allocation: uses the
 * pool, so it is callable from VMX root). Caller does INVEPT afterwards.
 */
int vt_ept_split_4k(struct vt_ept *ept, u64 gpa);
/* Top the split pool up again (may sleep: outside VMX root only). */
int vt_ept_refill_pool(struct vt_ept *ept);
/*
 * Call fn on every table page the CPU may walk or the pool may hand out,
 * the PML4 included; stops at the first nonzero return and returns it.
 */
int vt_ept_for_each_table(const struct vt_ept *ept, int (*fn)(void *ctx, u64 pa), void *ctx);

/* What vt_ept_audit_identity found in the live tables. */
struct vt_ept_audit {
	u64 leaves;		/* entries that map memory, of any page size */
	u64 small_leaves;	/* of those, 4 KiB ones */
	u64 off_identity;	/* leaves mapping another frame or lacking R, W or X */
	u64 shielded;		/* 4 KiB leaves the shield redirected (not off_identity) */
};

/*
 * Walk every table as the CPU would and count the leaves that are not
 * identity with full rights: after a debugger has removed every hook this
 * must be 0 (the shield's leaves are counted apart). Read-only; callers keep
 * the tables from changing meanwhile.
 */
void vt_ept_audit_identity(const struct vt_ept *ept, struct vt_ept_audit *audit);

/*
 * A CPU's private view (ept_view.c): the shared hierarchy with a few 4 KiB
 * leaves of its own. Its tables: the PML4 copy, then the copies made on the
 * way down to those leaves (one PDPT, PD and PT per distinct 512 GiB, 1 GiB
 * and 2 MiB region): enough for VT_EPT_VIEW_PAGES leaves anywhere, so a view
 * never runs out while it maps no more pages than that.
 */
#define VT_EPT_VIEW_PAGES	8
#define VT_EPT_VIEW_TABLES	(1 + 3 * VT_EPT_VIEW_PAGES)

struct vt_ept_view {
	void *block;			/* VT_EPT_VIEW_TABLES pages, allocated at load */
	u64 *table[VT_EPT_VIEW_TABLES];	/* [0] the PML4 */
	u64 pa[VT_EPT_VIEW_TABLES];
	u32 used;			/* tables holding copies; 0: never reset */
	u64 eptp;			/* what the VMCS's EPT pointer takes to walk it */
};

int vt_ept_view_alloc(struct vt_ept_view *v);
void vt_ept_view_free(struct vt_ept_view *v);
/* The view maps exactly what the shared EPT maps now. */
void vt_ept_view_reset(struct vt_ept_view *v, const struct vt_ept *shared);
/*
 * Map the 4 KiB page at gpa with entry in the view alone, copying the tables
 * on the way that are still shared. -VT_ENOSPC when the view has no table
 * left, -VT_EINVAL when gpa has no 4 KiB leaf. Callable from VMX root.
 */
int vt_ept_view_map(struct vt_ept_view *v, u64 gpa, u64 entry);

#ifdef __cplusplus
}
#endif

#endif /* VT_CORE_EPT_H */
