/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VMX root's page tables (HOST_CR3), private all the way down. Sharing the
 * kernel's lower-level tables would let a hostile kernel remap the module's
 * code or a host stack under VMX root by rewriting one of its own PTEs. At
 * load, in the kernel's context, the OS layer mirrors the few ranges root
 * touches (the direct map of RAM, the module image, the rings): each of
 * our tables is a page of ours, and each leaf a copy of the kernel's leaf
 * as it was then. The host window (host_window.c) has a top-level slot the
 * kernel leaves empty. Every table is hidden from the guest (shield.h).
 *
 * Paging structures: SDM Vol. 3A 4.5 (4-level and 5-level paging).
 */
#ifndef VT_CORE_HOST_PT_H
#define VT_CORE_HOST_PT_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VT_PTE_PRESENT	VT_BIT(0)
#define VT_PTE_WRITE	VT_BIT(1)
#define VT_PTE_PWT	VT_BIT(3)
#define VT_PTE_PCD	VT_BIT(4)
#define VT_PTE_LARGE	VT_BIT(7)	/* PS: a 1 GiB or 2 MiB leaf above the PTE level */
#define VT_PTE_NX	VT_BIT(63)
#define VT_PTE_ADDR	0x000ffffffffff000ull
#define VT_TABLE_FLAGS	(VT_PTE_PRESENT | VT_PTE_WRITE)

struct vt_hv;

/* An empty top-level table and the window, at load. */
int vt_host_pt_init(struct vt_hv *hv);
void vt_host_pt_fini(struct vt_hv *hv);
/*
 * Map [va, va + len) as the kernel's current page tables do, at load and in
 * the kernel's context (its tables are read through its direct map). What
 * the kernel does not map stays unmapped.
 */
int vt_host_pt_mirror(struct vt_hv *hv, u64 va, u64 len);
/* Hide every table page of ours behind the shield's decoy. */
int vt_host_pt_hide(struct vt_hv *hv);

#ifdef __cplusplus
}
#endif

#endif
