// SPDX-License-Identifier: GPL-2.0
/*
 * MTRR snapshot and effective memory type of a physical range, SDM Vol. 3A
 * 11.11. The identity EPT gives every leaf the type the MTRRs assign to its
 * range, so the guest's effective memory type (EPT type combined with its
 * PAT, SDM Vol. 3C 29.3.7) stays what it was before virtualization.
 */
#include "ept.h"
#include "intrin.h"
#include "vmx_defs.h"

#define CPUID_1_EDX_MTRR	VT_BIT(12)

static void vt_mtrr_read_fixed(struct vt_mtrr_state *s)
{
	static const u32 msrs[] = {
		MSR_MTRRfix64K_00000, MSR_MTRRfix16K_80000, MSR_MTRRfix16K_A0000,
		MSR_MTRRfix4K_C0000, MSR_MTRRfix4K_C0000 + 1, MSR_MTRRfix4K_C0000 + 2,
		MSR_MTRRfix4K_C0000 + 3, MSR_MTRRfix4K_C0000 + 4, MSR_MTRRfix4K_C0000 + 5,
		MSR_MTRRfix4K_C0000 + 6, MSR_MTRRfix4K_C0000 + 7,
	};
	u32 i, b;

	for (i = 0; i < VT_ARRAY_SIZE(msrs); i++) {
		u64 v = vt_rdmsr(msrs[i]);

		for (b = 0; b < 8; b++)
			s->fixed[i * 8 + b] = (u8)(v >> (b * 8));
	}
}

void vt_mtrr_read(struct vt_mtrr_state *s)
{
	struct vt_cpuid_regs r;
	u32 i, phys_bits = 36;

	vt_memset(s, 0, sizeof(*s));
	vt_cpuid(0x80000000, 0, &r);
	if (r.eax >= 0x80000008) {
		vt_cpuid(0x80000008, 0, &r);
		phys_bits = r.eax & 0xff;
	}
	s->phys_mask = ((1ull << phys_bits) - 1) & ~0xfffull;
	vt_cpuid(1, 0, &r);
	s->supported = r.edx & CPUID_1_EDX_MTRR;
	if (!s->supported)
		return;
	s->cap = vt_rdmsr(MSR_MTRRcap);
	s->def_type = vt_rdmsr(MSR_MTRRdefType);
	s->nr_var = s->cap & MTRR_CAP_VCNT_MASK;
	if (s->nr_var > VT_MTRR_MAX_VAR)
		s->nr_var = VT_MTRR_MAX_VAR;
	for (i = 0; i < s->nr_var; i++) {
		s->var[i].base = vt_rdmsr(MSR_MTRRphysBase0 + 2 * i);
		s->var[i].mask = vt_rdmsr(MSR_MTRRphysMask0 + 2 * i);
	}
	if ((s->cap & MTRR_CAP_FIX) && (s->def_type & MTRR_DEF_TYPE_FE))
		vt_mtrr_read_fixed(s);
}

/* Index into fixed[]: 64K units below 512K, 16K below 768K, 4K below 1M. */
static u32 vt_mtrr_fixed_index(u64 addr)
{
	if (addr < 0x80000)
		return addr >> 16;
	if (addr < 0xc0000)
		return 8 + ((addr - 0x80000) >> 14);
	return 24 + ((addr - 0xc0000) >> 12);
}

static u8 vt_mtrr_fixed_type(const struct vt_mtrr_state *s, u64 base, u64 size)
{
	u32 first = vt_mtrr_fixed_index(base);
	u32 last = vt_mtrr_fixed_index(base + size - 1);
	u32 i;

	for (i = first + 1; i <= last; i++)
		if (s->fixed[i] != s->fixed[first])
			return MTRR_TYPE_INVALID;
	return s->fixed[first];
}

/*
 * Overlap rules, SDM Vol. 3A 11.11.4.1: UC wins; WT wins over WB; any other
 * mix is undefined, for which UC is the safe choice.
 */
static u8 vt_mtrr_combine(u8 cur, u8 t)
{
	if (cur == MTRR_TYPE_INVALID || cur == t)
		return t;
	if (cur == MTRR_TYPE_UNCACHABLE || t == MTRR_TYPE_UNCACHABLE)
		return MTRR_TYPE_UNCACHABLE;
	if ((cur == MTRR_TYPE_WRTHROUGH && t == MTRR_TYPE_WRBACK) ||
	    (cur == MTRR_TYPE_WRBACK && t == MTRR_TYPE_WRTHROUGH))
		return MTRR_TYPE_WRTHROUGH;
	return MTRR_TYPE_UNCACHABLE;
}

u8 vt_mtrr_range_type(const struct vt_mtrr_state *s, u64 base, u64 size)
{
	u8 type = MTRR_TYPE_INVALID;
	u32 i;

	if (!s->supported || !(s->def_type & MTRR_DEF_TYPE_E))
		return MTRR_TYPE_UNCACHABLE;
	if ((s->cap & MTRR_CAP_FIX) && (s->def_type & MTRR_DEF_TYPE_FE) &&
	    base < VT_MTRR_FIXED_END) {
		if (base + size > VT_MTRR_FIXED_END)
			return MTRR_TYPE_INVALID;
		return vt_mtrr_fixed_type(s, base, size);
	}
	for (i = 0; i < s->nr_var; i++) {
		u64 mask = s->var[i].mask & s->phys_mask;
		u64 vbase = s->var[i].base & s->phys_mask;

		if (!(s->var[i].mask & MTRR_PHYSMASK_V))
			continue;
		if ((base ^ vbase) & mask & ~(size - 1))
			continue;			/* disjoint */
		if (mask & (size - 1))
			return MTRR_TYPE_INVALID;	/* covers part of the range */
		type = vt_mtrr_combine(type, (u8)(s->var[i].base & 0xff));
	}
	if (type == MTRR_TYPE_INVALID)
		type = (u8)(s->def_type & MTRR_DEF_TYPE_MASK);
	return type;
}
