// SPDX-License-Identifier: GPL-2.0
/*
 * VMCALL: the control channel from the module's kernel side (ABI in
 * include/uapi/vtice/vmcall.h). Honoured only from CPL 0 in 64-bit mode
 * with the per-load key in RCX. Anything else is not vtice's: under a
 * parent hypervisor a kernel-mode one is the parent's and goes up to it
 * (parent.c); otherwise it gets #UD and nothing else, exactly what VMCALL
 * does outside VMX non-root (SDM Vol. 2B VMCALL).
 */
#include "exit.h"
#include "intrin.h"
#include <vtice/vmcall.h>

static bool vt_vmcall_authentic(struct vt_exit *exit)
{
	u64 cs_ar = vt_vmread_or0(GUEST_CS_AR_BYTES);

	if (VT_LOAD_ACQUIRE(exit->vcpu->hv->sealed))
		return false;	/* a stealth load: nothing in the guest may talk to vtice */
	if (vt_guest_cpl() != 0 || !(cs_ar & VMX_AR_L_MASK))
		return false;
	return exit->regs->rcx == exit->vcpu->hv->key;
}

/*
 * VTICE_VMCALL_STEALTH. The first CPU retires the shield's copies while
 * the others wait for it, so none flushes its translations before the
 * EPT has changed; the last of `cpus` seals.
 */
static u64 vt_stealth_vmcall(struct vt_vcpu *vcpu, u64 cpus, u64 *sealed_now)
{
	struct vt_hv *hv = vcpu->hv;
	u32 idle = 0;

	*sealed_now = 0;
	if (cpus == 0)
		return (u64)VTICE_VMCALL_EINVAL;
	if (__atomic_compare_exchange_n(&hv->stealth_stage, &idle, 1, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		vt_shield_retire_copies(&hv->shield, &hv->ept);
		VT_STORE_RELEASE(hv->stealth_stage, 2);
	}
	while (VT_LOAD_ACQUIRE(hv->stealth_stage) != 2)
		vt_pause();
	vt_hv_invept_local(hv);
	if (__atomic_add_fetch(&hv->stealth_calls, 1, __ATOMIC_ACQ_REL) == cpus) {
		VT_STORE_RELEASE(hv->sealed, true);
		*sealed_now = 1;
	}
	return VTICE_VMCALL_OK;
}

static u64 vt_emit_test(struct vt_vcpu *vcpu, u64 count, u64 value, u64 *stored)
{
	struct vtice_record rec = { .type = VTICE_REC_TEST, .cpu = (u16)vcpu->cpu };
	u64 i;

	*stored = 0;
	if (!vcpu->ring.hdr || count == 0 || count > VTICE_VMCALL_EMIT_MAX)
		return (u64)VTICE_VMCALL_EINVAL;
	for (i = 0; i < count; i++) {
		rec.tsc = vt_guest_tsc(vcpu);
		rec.u.test.value = value;
		rec.u.test.sequence = i;
		if (vt_ring_push(&vcpu->ring, &rec))
			(*stored)++;
	}
	return VTICE_VMCALL_OK;
}

static u64 vt_syscalls_vmcall(struct vt_vcpu *vcpu, const struct vt_guest_regs *r)
{
	struct vt_sys_filter f = { .pid = (u32)r->r8 };

	vt_memcpy(f.comm, &r->r9, 8);
	vt_memcpy(f.comm + 8, &r->r10, 8);
	if (vt_syscall_trap_set(vcpu, r->rdx & VTICE_VMCALL_SYSCALLS_ON,
				r->rdx & VTICE_VMCALL_SYSCALLS_QUIET, &f))
		return (u64)VTICE_VMCALL_ENOSYS;
	return VTICE_VMCALL_OK;
}

enum vt_exit_action vt_handle_vmcall(struct vt_exit *exit)
{
	struct vt_guest_regs *r = exit->regs;
	struct vt_vcpu *vcpu = exit->vcpu;
	const struct vt_callbacks *cb = vcpu->hv->cb;
	enum vt_exit_action action = VT_EXIT_RESUME;
	u64 out = 0, status = VTICE_VMCALL_OK;

	if (!vt_vmcall_authentic(exit)) {
		if (!vt_forward_to_parent(exit))
			vt_inject_ud(exit);
		return VT_EXIT_RESUME;
	}
	/*
	 * The key does not go back in RCX: left there, the next interrupt's
	 * entry would push it onto a kernel stack, whose page outlives it
	 * (a scan of RAM after a stealth load found one copy, hv.stealth-key).
	 */
	r->rcx = 0;
	switch (r->rax) {
	case VTICE_VMCALL_PING:
		out = VTICE_VMCALL_PONG;
		break;
	case VTICE_VMCALL_DEVIRTUALIZE:
		action = VT_EXIT_LEAVE_VMX;
		break;
	case VTICE_VMCALL_EMIT_TEST:
		status = vt_emit_test(vcpu, r->rdx, r->r8, &out);
		break;
	case VTICE_VMCALL_INVEPT:
		vt_hv_invept_local(vcpu->hv);
		break;
	case VTICE_VMCALL_SYSCALLS:
		/* The debug stub's trap is armed: the kernel side neither changes nor removes it. */
		status = vcpu->hv->sys_stub.on ? (u64)VTICE_VMCALL_EBUSY : vt_syscalls_vmcall(vcpu, r);
		break;
	case VTICE_VMCALL_SYSCALL_STRINGS:
		status = vcpu->hv->sys_stub.on ? (u64)VTICE_VMCALL_EBUSY
					       : vt_syscall_strings_set(vcpu->hv, r->rdx, r->r8);
		break;
	case VTICE_VMCALL_SYSCALL_NUMBERS:
		status = vcpu->hv->sys_stub.on ? (u64)VTICE_VMCALL_EBUSY
					       : vt_syscall_numbers_set(vcpu->hv, r->rdx, r->r8);
		break;
	case VTICE_VMCALL_PROFILE:
		status = vt_profile_vmcall(vcpu, r, &out);
		break;
	case VTICE_VMCALL_STEALTH:
		status = vt_stealth_vmcall(vcpu, r->rdx, &out);
		break;
	default:
		if (r->rax >= VTICE_VMCALL_USER_BASE && cb && cb->vmcall &&
		    cb->vmcall(vcpu, exit, r->rax))
			return VT_EXIT_RESUME;	/* the callback set RAX/RDX, advanced RIP */
		status = (u64)VTICE_VMCALL_ENOSYS;
	}
	r->rax = status;
	r->rdx = out;
	vt_advance_rip(exit);
	return action;
}
