// SPDX-License-Identifier: GPL-2.0
/*
 * Guest segment state from live descriptors. The VMCS access-rights field
 * is descriptor bits 55:40 with bits 11:8 reserved (mask 0xf0ff) plus bit 16
 * "unusable" (SDM Vol. 3C 24.4.1). A null selector is unusable; TR and LDTR
 * are 16-byte system descriptors whose base has 64 bits (SDM Vol. 3A 7.2.3).
 */
#include "segment.h"
#include "intrin.h"

#define SEL_TI		0x4u
#define SEL_INDEX(s)	((s) >> 3)

static u64 vt_desc_base(const union vt_segment_descriptor *d)
{
	u64 base = d[0].base_low | ((u64)d[0].base_high << 24);

	if (!d[0].s)	/* system descriptor: upper half holds base 63:32 */
		base |= (d[1].raw & 0xffffffffull) << 32;
	return base;
}

static u32 vt_desc_limit(const union vt_segment_descriptor *d)
{
	u32 limit = d->limit_low | ((u32)d->limit_high << 16);

	return d->g ? (limit << 12) | 0xfff : limit;
}

/* Selectors that point into an LDT: ask the CPU (LAR/LSL) for rights/limit. */
static void vt_segment_from_ldt(u16 sel, struct vt_segment *seg)
{
	u32 ar, limit;

	if (!vt_lar(sel, &ar) || !vt_lsl(sel, &limit)) {
		seg->ar = VMX_AR_UNUSABLE_MASK;
		return;
	}
	seg->ar = (ar >> 8) & VMX_AR_FROM_DESC_MASK;
	seg->limit = limit;
}

void vt_segment_read(const struct vt_desc_ptr *gdt, u16 sel, struct vt_segment *seg)
{
	const union vt_segment_descriptor *d;

	seg->sel = sel;
	seg->base = 0;
	seg->limit = 0;
	seg->ar = VMX_AR_UNUSABLE_MASK;
	if (sel & SEL_TI) {
		vt_segment_from_ldt(sel, seg);
		return;
	}
	if (SEL_INDEX(sel) == 0 || (u32)SEL_INDEX(sel) * 8 + 7 > gdt->limit)
		return;
	d = (const union vt_segment_descriptor *)(gdt->base + SEL_INDEX(sel) * 8);
	if (!d->present)
		return;
	seg->base = vt_desc_base(d);
	seg->limit = vt_desc_limit(d);
	seg->ar = (u32)(d->raw >> 40) & VMX_AR_FROM_DESC_MASK;
}
