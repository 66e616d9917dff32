// SPDX-License-Identifier: GPL-2.0
/*
 * The profiler's samples (profile.h; the group is in records.h): where the
 * guest was when this CPU's timer came due. Registers come from the VMCS
 * and the exit's frame; the task and the stack are copied from guest
 * memory through the guest's own page tables (vt_own_mem) and never
 * followed: a stack the guest left unmapped only makes the sample shorter.
 * The console unwinds the copied stack with the kernel's ORC tables.
 */
#include "exit.h"
#include "intrin.h"
#include <vtice/vmcall.h>

#define VT_ACTIVITY_HLT	1	/* guest activity state, SDM 3C 25.4.2 */

/* What both owners pass: a stack the ring's records carry, a NUL-ended comm. */
static bool vt_profile_valid(u32 stack_bytes, const struct vt_sys_filter *filter)
{
	return stack_bytes <= VTICE_PROFILE_STACK_MAX && stack_bytes % 16 == 0 && !filter->comm[15];
}

/* A period the timer can count: at least a tick, at most its 32 bits. */
static bool vt_profile_period_valid(const struct vt_hv *hv, u64 period_tsc)
{
	u64 ticks = period_tsc >> hv->caps.preempt_timer_shift;

	return ticks && ticks <= 0xffffffffull;
}

/* Samples every period_tsc on this CPU (0: stops); -VT_* on failure. */
static int vt_profile_set(struct vt_vcpu *vcpu, u64 period_tsc, u32 stack_bytes,
			  const struct vt_sys_filter *filter)
{
	u64 ticks = period_tsc >> vcpu->hv->caps.preempt_timer_shift;

	if (period_tsc && !vt_profile_period_valid(vcpu->hv, period_tsc))
		return -VT_EINVAL;
	vcpu->profile.stack_bytes = stack_bytes;
	vcpu->profile.filter = *filter;
	return vt_timer_set_sampling(vcpu, ticks);
}

u64 vt_profile_vmcall(struct vt_vcpu *vcpu, const struct vt_guest_regs *r, u64 *samples)
{
	struct vt_sys_filter filter = { .pid = (u32)(r->r8 >> 32) };
	int ret;

	*samples = vcpu->counts->profile_samples;
	if (vcpu->hv->profile_stub.on)
		return (u64)VTICE_VMCALL_EBUSY;	/* the debug stub's: neither changed nor stopped */
	vt_memcpy(filter.comm, &r->r9, 8);
	vt_memcpy(filter.comm + 8, &r->r10, 8);
	if (!vt_profile_valid((u32)r->r8, &filter))
		return (u64)VTICE_VMCALL_EINVAL;
	ret = vt_profile_set(vcpu, r->rdx, (u32)r->r8, &filter);
	if (!ret)
		vcpu->profile.by_stub = false;
	if (ret == -VT_EOPNOTSUPP)
		return (u64)VTICE_VMCALL_ENOSYS;
	return ret ? (u64)VTICE_VMCALL_EINVAL : VTICE_VMCALL_OK;
}

int vt_profile_stub_set(struct vt_hv *hv, bool on, u64 period_tsc, u32 stack_bytes,
			const struct vt_sys_filter *filter)
{
	struct vt_profile_stub *want = &hv->profile_stub;

	if (!on && !want->on)
		return 0;	/* never the kernel side's profiler */
	if (on && !vt_may_set(hv->caps.pin, PIN_BASED_VMX_PREEMPTION_TIMER))
		return -VT_EOPNOTSUPP;
	if (on && (!vt_profile_period_valid(hv, period_tsc) || !vt_profile_valid(stack_bytes, filter)))
		return -VT_EINVAL;
	if (on) {
		want->period_tsc = period_tsc;
		want->stack_bytes = stack_bytes;
		want->filter = *filter;
	}
	want->on = on;
	VT_STORE_RELEASE(want->gen, want->gen + 1);
	return 0;
}

void vt_profile_stub_sync(struct vt_vcpu *vcpu)
{
	const struct vt_profile_stub *want = &vcpu->hv->profile_stub;
	static const struct vt_sys_filter any;
	u32 gen = VT_LOAD_ACQUIRE(want->gen);

	if (vcpu->profile.stub_seen == gen)
		return;
	vcpu->profile.stub_seen = gen;
	/* The stub checked that no CPU samples for the kernel side. */
	if (want->on)
		vt_profile_set(vcpu, want->period_tsc, want->stack_bytes, &want->filter);
	else
		vt_profile_set(vcpu, 0, 0, &any);
	vcpu->profile.by_stub = want->on;
}

bool vt_profile_kernel_sampling(const struct vt_vcpu *vcpu)
{
	return vcpu->timer.sample_ticks && !vcpu->profile.by_stub;
}

/* Two words per record. */
u32 vt_put_stack(struct vt_vcpu *vcpu, u64 rsp, u32 bytes, u32 n)
{
	struct vt_profile_vcpu *p = &vcpu->profile;
	int got = bytes && bytes <= sizeof(p->stack) ? vt_own_mem(vcpu, rsp, p->stack, bytes, false) : 0;
	u32 i;

	for (i = 0; got > 0 && i + 2 <= (u32)got / 8; i += 2)
		vt_put_data(&p->recs[n++], &p->recs[0], VTICE_SYSCALL_DATA_STACK, p->stack[i],
			    p->stack[i + 1]);
	return n;
}

void vt_profile_sample(struct vt_vcpu *vcpu)
{
	struct vtice_record *recs = vcpu->profile.recs;
	u64 rsp = vt_vmread_or0(GUEST_RSP);
	bool user = vt_guest_cpl() == 3;
	u32 n = 1, flags = 0;

	if (!vcpu->ring.hdr)
		return;
	if (user)
		flags |= VTICE_PROFILE_USER;
	if (vt_vmread_or0(GUEST_ACTIVITY_STATE) == VT_ACTIVITY_HLT)
		flags |= VTICE_PROFILE_HALTED;
	vt_memset(&recs[0], 0, sizeof(recs[0]));
	recs[0].type = VTICE_REC_PROFILE_SAMPLE;
	recs[0].cpu = (u16)vcpu->cpu;
	recs[0].tsc = vt_guest_tsc(vcpu);
	recs[0].u.raw[0] = vt_vmread_or0(GUEST_RIP);
	recs[0].u.raw[1] = rsp;
	vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_REGS, vcpu->regs->rbp, 0);
	n = vt_put_current_task(vcpu, &vcpu->profile.filter, recs, n);
	if (!n)
		return;		/* another task's: not asked for */
	if (!user)
		n = vt_put_stack(vcpu, rsp, vcpu->profile.stack_bytes, n);
	recs[0].flags = (n - 1) | flags;
	if (vt_ring_push_group(&vcpu->ring, recs, n))
		vcpu->counts->profile_samples++;
}
