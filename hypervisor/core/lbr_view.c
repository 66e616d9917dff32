// SPDX-License-Identifier: GPL-2.0
/*
 * The LBR stack as the kernel would find it on the bare CPU (lbr_view.h).
 * Everything here runs in VMX root, where DEBUGCTL is 0 after every exit
 * (SDM Vol. 3C 28.5.1): the stack does not record while it is copied,
 * tried or put back.
 */
#include "exit.h"
#include "intrin.h"

static bool vt_lbr_view_wanted(const struct vt_vcpu *vcpu)
{
	return vcpu->hv->lbr_msrs.nr && (vcpu->debugctl_owned & DEBUGCTLMSR_LBR);
}

static void vt_lbr_view_intercept(struct vt_vcpu *vcpu, bool on)
{
	const struct vt_lbr_msrs *m = &vcpu->hv->lbr_msrs;
	u32 i;

	vt_set_msr_intercept(vcpu, MSR_LBR_TOS, on);
	for (i = 0; i < m->nr; i++) {
		vt_set_msr_intercept(vcpu, m->from + i, on);
		vt_set_msr_intercept(vcpu, m->to + i, on);
		if (m->info)
			vt_set_msr_intercept(vcpu, m->info + i, on);
	}
}

static void vt_lbr_view_take(struct vt_vcpu *vcpu)
{
	const struct vt_lbr_msrs *m = &vcpu->hv->lbr_msrs;
	struct vt_lbr_view *v = &vcpu->lbr_view;
	u32 i;

	vt_memset(v, 0, sizeof(*v));
	vt_rdmsr_safe(MSR_LBR_TOS, &v->tos);
	for (i = 0; i < m->nr; i++) {
		vt_rdmsr_safe(m->from + i, &v->from[i]);
		vt_rdmsr_safe(m->to + i, &v->to[i]);
		if (m->info)
			vt_rdmsr_safe(m->info + i, &v->info[i]);
	}
	v->active = true;
	vt_lbr_view_intercept(vcpu, true);
}

/*
 * TOS is read-only on some models: where it does not take the copy's
 * value, the entries go in rotated, so that the most recent is still at
 * TOS and the rest behind it in the same order.
 */
static void vt_lbr_view_put_back(struct vt_vcpu *vcpu)
{
	const struct vt_lbr_msrs *m = &vcpu->hv->lbr_msrs;
	struct vt_lbr_view *v = &vcpu->lbr_view;
	u64 tos;
	u32 i, hw, mask = m->nr - 1;

	vt_lbr_view_intercept(vcpu, false);
	v->active = false;
	vt_wrmsr_safe(MSR_LBR_TOS, v->tos);
	if (vt_rdmsr_safe(MSR_LBR_TOS, &tos))
		tos = v->tos;
	for (i = 0; i < m->nr; i++) {
		hw = (u32)(tos - v->tos + i) & mask;
		vt_wrmsr_safe(m->from + hw, v->from[i]);
		vt_wrmsr_safe(m->to + hw, v->to[i]);
		if (m->info)
			vt_wrmsr_safe(m->info + hw, v->info[i]);
	}
}

void vt_lbr_view_sync(struct vt_vcpu *vcpu)
{
	bool wanted = vt_lbr_view_wanted(vcpu);

	if (wanted && !vcpu->lbr_view.active)
		vt_lbr_view_take(vcpu);
	else if (!wanted && vcpu->lbr_view.active)
		vt_lbr_view_put_back(vcpu);
}

void vt_lbr_view_release(struct vt_vcpu *vcpu)
{
	if (vcpu->lbr_view.active)
		vt_lbr_view_put_back(vcpu);
}

u64 *vt_lbr_view_slot(struct vt_vcpu *vcpu, u32 msr)
{
	const struct vt_lbr_msrs *m = &vcpu->hv->lbr_msrs;
	struct vt_lbr_view *v = &vcpu->lbr_view;

	if (!v->active)
		return NULL;
	if (msr == MSR_LBR_TOS)
		return &v->tos;
	if (msr - m->from < m->nr)
		return &v->from[msr - m->from];
	if (msr - m->to < m->nr)
		return &v->to[msr - m->to];
	if (m->info && msr - m->info < m->nr)
		return &v->info[msr - m->info];
	return NULL;
}

/*
 * The real MSR judges the value (reserved bits, a read-only TOS) and says
 * what of it sticks; its own content goes back at once, so the stack the
 * hypervisor records is untouched.
 */
bool vt_lbr_view_write(u32 msr, u64 *slot, u64 value)
{
	u64 old, kept;

	if (vt_rdmsr_safe(msr, &old) || vt_wrmsr_safe(msr, value))
		return false;
	if (vt_rdmsr_safe(msr, &kept))
		kept = value;
	vt_wrmsr_safe(msr, old);
	*slot = kept;
	return true;
}
