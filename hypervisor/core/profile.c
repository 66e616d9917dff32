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

u64 vt_profile_vmcall(struct vt_vcpu *vcpu, const struct vt_guest_regs *r, u64 *samples)
{
	u64 period_tsc = r->rdx, stack_bytes = (u32)r->r8;
	u64 ticks = period_tsc >> vcpu->hv->caps.preempt_timer_shift;
	struct vt_sys_filter filter = { .pid = (u32)(r->r8 >> 32) };
	int ret;

	*samples = vcpu->counts->profile_samples;
	vt_memcpy(filter.comm, &r->r9, 8);
	vt_memcpy(filter.comm + 8, &r->r10, 8);
	if (stack_bytes > VTICE_PROFILE_STACK_MAX || stack_bytes % 16 || filter.comm[15])
		return (u64)VTICE_VMCALL_EINVAL;
	if (period_tsc && (ticks == 0 || ticks > 0xffffffffull))
		return (u64)VTICE_VMCALL_EINVAL;
	vcpu->profile.stack_bytes = (u32)stack_bytes;
	vcpu->profile.filter = filter;
	ret = vt_timer_set_sampling(vcpu, ticks);
	if (ret == -VT_EOPNOTSUPP)
		return (u64)VTICE_VMCALL_ENOSYS;
	return ret ? (u64)VTICE_VMCALL_EINVAL : VTICE_VMCALL_OK;
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
