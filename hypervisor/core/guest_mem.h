/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest memory as the stopped kernel sees it: virtual addresses walked
 * through a CPU's CR3, physical pages touched only when they are RAM.
 * Portable: the page mapper and the RAM map come from the caller (the host
 * window and the OS's RAM list in the module, plain buffers in tests).
 */
#ifndef VT_DEBUG_GUEST_MEM_H
#define VT_DEBUG_GUEST_MEM_H

#include "../core/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vt_ram_range {
	u64 start, end;		/* [start, end), page aligned */
};

struct vt_guest_mem {
	const struct vt_ram_range *ram;
	u32 nr_ram;
	/* The 4 KiB page holding pa, mapped (pa's offset included); NULL: refuse. */
	void *(*map)(void *ctx, u64 pa);
	void *ctx;
};

/* A CPU's paging state, from its VMCS. */
struct vt_paging {
	u64 cr3;
	bool la57;		/* CR4.LA57: five levels */
};

bool vt_guest_is_ram(const struct vt_guest_mem *m, u64 pa);
/* 0, or -VT_EFAULT when gva is not mapped by RAM-resident tables. */
int vt_guest_translate(const struct vt_guest_mem *m, const struct vt_paging *pg, u64 gva,
		       u64 *gpa);
/* Bytes copied (short at the first unmapped or non-RAM page), or -VT_EFAULT. */
int vt_guest_read(const struct vt_guest_mem *m, const struct vt_paging *pg, u64 gva,
		  void *buf, u32 len);
int vt_guest_write(const struct vt_guest_mem *m, const struct vt_paging *pg, u64 gva,
		   const void *buf, u32 len);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_GUEST_MEM_H */
