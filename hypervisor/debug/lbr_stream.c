// SPDX-License-Identifier: GPL-2.0
/*
 * The last-branch stack as a stream (lbr_stream.h). MSR_LASTBRANCH_TOS
 * names the most recent entry and moves by one, modulo the depth, with
 * every branch recorded (SDM Vol. 3B 18.4.8); so the entries after the
 * mark's, up to TOS, are the new ones, unless the stack went all the way
 * round, which shows as the mark's own entry overwritten.
 */
#include "lbr_stream.h"
#include "../core/intrin.h"
#include "../core/vmx_defs.h"

struct vt_lbr_raw {
	u64 from, to, info;
};

static bool vt_lbr_read_raw(const struct vt_lbr_model *m, u32 idx, struct vt_lbr_raw *r)
{
	r->info = 0;
	if (vt_rdmsr_safe(m->from + idx, &r->from) || vt_rdmsr_safe(m->to + idx, &r->to))
		return false;
	return !m->info || !vt_rdmsr_safe(m->info + idx, &r->info);
}

static bool vt_lbr_tos(const struct vt_lbr_model *m, u32 *tos)
{
	u64 v;

	if (vt_rdmsr_safe(MSR_LBR_TOS, &v))
		return false;
	*tos = (u32)v & (m->nr - 1);
	return true;
}

void vt_lbr_take_mark(const struct vt_lbr_model *m, struct vt_lbr_mark *mark)
{
	struct vt_lbr_raw r;

	mark->valid = m->nr && vt_lbr_tos(m, &mark->tos) && vt_lbr_read_raw(m, mark->tos, &r);
	if (!mark->valid)
		return;
	mark->from = r.from;
	mark->to = r.to;
	mark->info = r.info;
}

/* The mark's entry was written over: more branches came than the stack holds. */
static bool vt_lbr_went_round(const struct vt_lbr_model *m, const struct vt_lbr_mark *mark)
{
	struct vt_lbr_raw r;

	return !vt_lbr_read_raw(m, mark->tos, &r) || r.from != mark->from || r.to != mark->to ||
	       r.info != mark->info;
}

u32 vt_lbr_since(const struct vt_lbr_model *m, struct vt_lbr_mark *mark, struct vtice_lbr_entry *out,
		 bool *wrapped)
{
	struct vt_lbr_raw r;
	u32 tos, first, count, i, n = 0;

	*wrapped = false;
	if (!mark->valid || !vt_lbr_tos(m, &tos)) {
		vt_lbr_take_mark(m, mark);
		return 0;
	}
	count = (tos - mark->tos) & (m->nr - 1);
	first = mark->tos + 1;
	if (vt_lbr_went_round(m, mark)) {
		*wrapped = true;
		count = m->nr;
		first = tos + 1;
	}
	for (i = 0; i < count && n < VTICE_LBR_MAX; i++)
		if (vt_lbr_read_raw(m, (first + i) & (m->nr - 1), &r))
			vt_lbr_decode(m->format, r.from, r.to, r.info, &out[n++]);
	vt_lbr_take_mark(m, mark);
	return n;
}
