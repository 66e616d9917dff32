// SPDX-License-Identifier: GPL-2.0
/*
 * TSC offsetting for the all-stop (tsc_hide.h). Guest TSC = real TSC -
 * applied, where applied is the hidden amount this CPU's VMCS holds.
 */
#include "hv.h"
#include "intrin.h"
#include "tsc_hide.h"
#include "vmx_defs.h"

int vt_hv_enable_tsc_hiding(struct vt_hv *hv)
{
	if (!vt_may_set(hv->caps.proc, CPU_BASED_USE_TSC_OFFSETTING))
		return -VT_EOPNOTSUPP;
	hv->ctls.proc |= CPU_BASED_USE_TSC_OFFSETTING;
	hv->tsc.on = true;
	return 0;
}

void vt_tsc_hide_add(struct vt_hv *hv, u64 cycles)
{
	if (hv->tsc.on)
		VT_STORE_RELEASE(hv->tsc.hidden, hv->tsc.hidden + cycles);
}

/*
 * The armed deadline follows the offset: the guest meant "when my TSC
 * reads D". A deadline of 0 is a disarmed timer, and the MSR reads 0 once
 * the timer fired (SDM Vol. 3A 11.5.4.1): both stay 0. delta wraps as a
 * signed amount (release moves it back).
 */
static void vt_tsc_move_deadline(u64 delta)
{
	u64 deadline;

	if (!delta || vt_rdmsr_safe(VT_MSR_TSC_DEADLINE, &deadline) || !deadline)
		return;
	deadline += delta;
	vt_wrmsr_safe(VT_MSR_TSC_DEADLINE, deadline ? deadline : 1);
}

void vt_tsc_hide_apply(struct vt_vcpu *vcpu)
{
	u64 hidden = VT_LOAD_ACQUIRE(vcpu->hv->tsc.hidden);

	if (!vcpu->hv->tsc.on)
		return;
	vt_vmwrite(TSC_OFFSET, (u64)-(s64)hidden);
	vt_tsc_move_deadline(hidden - vcpu->tsc_applied);
	vcpu->tsc_applied = hidden;
	/* Until a stop hides something, the guest's accesses need no help. */
	vt_set_msr_intercept(vcpu, VT_MSR_TSC, hidden != 0);
	vt_set_msr_intercept(vcpu, VT_MSR_TSC_DEADLINE, hidden != 0);
}

void vt_tsc_hide_release(struct vt_vcpu *vcpu)
{
	vt_tsc_move_deadline(0 - vcpu->tsc_applied);
	vcpu->tsc_applied = 0;
}

u64 vt_guest_tsc(const struct vt_vcpu *vcpu)
{
	return vt_rdtsc() - vcpu->tsc_applied;	/* 0 applied without tsc_offset=1 */
}

bool vt_tsc_hide_rdmsr(struct vt_vcpu *vcpu, u32 msr, u64 *value)
{
	u64 real;

	if (!vcpu->hv->tsc.on || (msr != VT_MSR_TSC && msr != VT_MSR_TSC_DEADLINE))
		return false;
	if (msr == VT_MSR_TSC) {
		*value = vt_guest_tsc(vcpu);
		return true;
	}
	if (vt_rdmsr_safe(msr, &real))
		return false;	/* no TSC deadline here: the plain path gives the #GP */
	*value = real ? real - vcpu->tsc_applied : 0;
	return true;
}

bool vt_tsc_hide_wrmsr(struct vt_vcpu *vcpu, u32 msr, u64 value, bool *fault)
{
	u64 real = value + vcpu->tsc_applied;

	if (!vcpu->hv->tsc.on || (msr != VT_MSR_TSC && msr != VT_MSR_TSC_DEADLINE))
		return false;
	if (msr == VT_MSR_TSC_DEADLINE && !value)
		real = 0;		/* disarm */
	else if (msr == VT_MSR_TSC_DEADLINE && real < value)
		real = ~0ull;		/* "never", not a wrap into the past */
	*fault = vt_wrmsr_safe(msr, real) != 0;
	return true;
}
