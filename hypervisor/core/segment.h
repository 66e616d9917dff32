/* SPDX-License-Identifier: GPL-2.0 */
/* Segment registers as the VMCS guest-state area wants them (SDM 3C 24.4.1). */
#ifndef VT_CORE_SEGMENT_H
#define VT_CORE_SEGMENT_H

#include "types.h"
#include "vmx_defs.h"

#ifdef __cplusplus
extern "C" {
#endif

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
