/* SPDX-License-Identifier: GPL-2.0 */
/* Segment registers as the VMCS guest-state area wants them (SDM 3C 24.4.1). */
#ifndef VT_CORE_SEGMENT_H
#define VT_CORE_SEGMENT_H

#include "types.h"
#include "vmx_defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ES, CS, SS, DS, FS, GS, LDTR, TR: their selector, limit, access-rights and
 * base fields are consecutive encodings in this order (SDM Vol. 3D B.1-B.4).
 */
enum { VT_SEG_ES, VT_SEG_CS, VT_SEG_SS, VT_SEG_DS, VT_SEG_FS, VT_SEG_GS, VT_SEG_LDTR,
	VT_SEG_TR, VT_SEG_COUNT };

struct vt_segment {
	u16 sel;
	u64 base;
	u32 limit;
	u32 ar;		/* VMX access-rights format, VMX_AR_UNUSABLE_MASK if null */
};

/* Decode selector sel against the GDT described by gdt (GDT memory is read). */
void vt_segment_read(const struct vt_desc_ptr *gdt, u16 sel, struct vt_segment *seg);

#ifdef __cplusplus
}
#endif

#endif /* VT_CORE_SEGMENT_H */
