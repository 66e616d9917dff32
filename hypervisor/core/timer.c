// SPDX-License-Identifier: GPL-2.0
/*
 * One VMX-preemption timer per CPU, shared by the stub's poll and the
 * profiler (profile.h). With the exit control "save VMX-preemption timer
 * value" the field holds what is left at every exit, so other exits do not
 * restart the count (SDM 3C 25.7.1); without it each VM entry loads the
 * field as last written, and frequent exits delay the expiry. The save
 * control may be 1 only while the timer is active (26.2.1.2): both change
 * together.
 */
#include "exit.h"
#include "intrin.h"

static int vt_timer_activate(const struct vt_vcpu *vcpu, bool on)
{
	int ret = vt_update_control(PIN_BASED_VM_EXEC_CONTROL, PIN_BASED_VMX_PREEMPTION_TIMER, on);

	if (!ret && vt_may_set(vcpu->hv->caps.exit, VM_EXIT_SAVE_VMX_PREEMPTION_TIMER))
		ret = vt_update_control(VM_EXIT_CONTROLS, VM_EXIT_SAVE_VMX_PREEMPTION_TIMER, on);
	return ret;
}

/* The nearer of two countdowns, 0 standing for none. */
static u64 vt_nearer(u64 a, u64 b)
{
	if (!a || !b)
		return a | b;
	return a < b ? a : b;
}

/* Loads the timer with the nearer countdown, or stops it when neither user needs it. */
static int vt_timer_load(struct vt_vcpu *vcpu)
{
	struct vt_timer *t = &vcpu->timer;
	u64 next = vt_nearer(vcpu->hv->preempt_ticks ? t->poll_left : 0,
			     t->sample_ticks ? t->sample_left : 0);
	int ret = 0;

	if (!next != !t->loaded)
		ret = vt_timer_activate(vcpu, next != 0);
	if (!ret && next)
		vt_vmwrite(VMX_PREEMPTION_TIMER_VALUE, next);
	t->loaded = ret ? t->loaded : next;
	return ret;
}

/* Takes ran ticks off a countdown; true when it came due (it then restarts). */
static bool vt_countdown(u64 *left, u64 period, u64 ran)
{
	if (*left > ran) {
		*left -= ran;
		return false;
	}
	*left = period;
	return true;
}

void vt_timer_init(struct vt_vcpu *vcpu)
{
	vcpu->timer.loaded = vcpu->hv->preempt_ticks;
	vcpu->timer.poll_left = vcpu->hv->preempt_ticks;
	vcpu->timer.sample_ticks = 0;	/* sampling armed before a hotplug or suspend is over */
}

u32 vt_timer_expired(struct vt_vcpu *vcpu)
{
	struct vt_timer *t = &vcpu->timer;
	u64 ran = t->loaded;	/* it counted all of it down */
	u32 due = 0;

	if (vcpu->hv->preempt_ticks && vt_countdown(&t->poll_left, vcpu->hv->preempt_ticks, ran))
		due |= VT_TIMER_POLL;
	if (t->sample_ticks && vt_countdown(&t->sample_left, t->sample_ticks, ran))
		due |= VT_TIMER_SAMPLE;
	vt_timer_load(vcpu);
	return due;
}

/* Ticks counted since the last load (0 when the field was not saved at this exit). */
static u64 vt_timer_ran(const struct vt_timer *t)
{
	u64 left = t->loaded;

	if (t->loaded)
		vt_vmread(VMX_PREEMPTION_TIMER_VALUE, &left);
	return left < t->loaded ? t->loaded - left : 0;
}

int vt_timer_set_sampling(struct vt_vcpu *vcpu, u64 ticks)
{
	struct vt_timer *t = &vcpu->timer;
	u64 ran = vt_timer_ran(t);

	if (ticks && !vt_may_set(vcpu->hv->caps.pin, PIN_BASED_VMX_PREEMPTION_TIMER))
		return -VT_EOPNOTSUPP;
	/* The poll keeps its period: what already ran counts, and one due now comes at once. */
	t->poll_left = t->poll_left > ran ? t->poll_left - ran : 1;
	t->sample_ticks = ticks;
	t->sample_left = ticks;
	return vt_timer_load(vcpu);
}
