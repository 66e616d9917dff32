// SPDX-License-Identifier: GPL-2.0
/*
 * RDMSR/WRMSR exits: only the MSRs set in the MSR bitmap (see vcpu.c) and
 * MSRs outside the bitmap's two ranges exit (SDM Vol. 3C 25.1.3).
 *  - IA32_VMX_* (0x480-0x491) raise #GP, as on a CPU without VMX.
 *  - IA32_FEATURE_CONTROL reads with both VMX-enable bits clear; it is
 *    locked, so writes raise #GP as they would natively.
 *  - IA32_DEBUGCTL is shadowed: the guest reads back what it wrote while
 *    the hypervisor may own BTF/LBR for tracing.
 *  - IA32_EFER exits only while the syscall trap is armed, which hides
 *    the cleared SCE bit (syscall_trap.c).
 *  - Everything else is passed through; a #GP the real access would take
 *    is reflected into the guest.
 */
#include "exit.h"
#include "intrin.h"

static bool vt_msr_is_vmx(u32 msr)
{
	return msr >= MSR_IA32_VMX_BASIC && msr <= MSR_IA32_VMX_VMFUNC;
}

enum vt_exit_action vt_handle_rdmsr(struct vt_exit *exit)
{
	struct vt_guest_regs *r = exit->regs;
	u32 msr = (u32)r->rcx;
	u64 value = 0;

	if (vt_msr_is_vmx(msr))
		return vt_complete(exit, true);
	if (msr == MSR_IA32_DEBUGCTLMSR)
		value = exit->vcpu->debugctl_shadow;
	else if (msr == MSR_EFER && exit->vcpu->sys.armed)
		value = vt_syscall_read_efer(exit->vcpu);
	else if (vt_rdmsr_safe(msr, &value))
		return vt_complete(exit, true);
	if (msr == MSR_IA32_FEAT_CTL)
		value &= ~(FEAT_CTL_VMX_ENABLED_INSIDE_SMX | FEAT_CTL_VMX_ENABLED_OUTSIDE_SMX);
	r->rax = (u32)value;
	r->rdx = value >> 32;
	return vt_complete(exit, false);
}

/*
 * Let the real MSR judge the guest's value (reserved bits #GP) and say what
 * sticks (a CPU or emulator may drop bits it does not implement): the guest
 * later reads back exactly what it would have read without us. VM entry
 * then loads that value, plus the bits the hypervisor owns, from the
 * guest-state field. In VMX root DEBUGCTL is 0 after every exit (SDM 3C
 * 28.5.1), so 0 is what we put back.
 */
static bool vt_write_debugctl(struct vt_vcpu *vcpu, u64 value)
{
	u64 effective = 0;

	if (vt_wrmsr_safe(MSR_IA32_DEBUGCTLMSR, value))
		return false;
	vt_rdmsr_safe(MSR_IA32_DEBUGCTLMSR, &effective);
	vt_wrmsr_safe(MSR_IA32_DEBUGCTLMSR, 0);
	vcpu->debugctl_shadow = effective;
	vt_vmwrite(GUEST_IA32_DEBUGCTL, effective | vcpu->debugctl_owned);
	return true;
}

enum vt_exit_action vt_handle_wrmsr(struct vt_exit *exit)
{
	struct vt_guest_regs *r = exit->regs;
	u32 msr = (u32)r->rcx;
	u64 value = (r->rdx << 32) | (u32)r->rax;

	if (vt_msr_is_vmx(msr) || msr == MSR_IA32_FEAT_CTL)
		return vt_complete(exit, true);
	if (msr == MSR_IA32_DEBUGCTLMSR)
		return vt_complete(exit, !vt_write_debugctl(exit->vcpu, value));
	if (msr == MSR_EFER && exit->vcpu->sys.armed)
		return vt_complete(exit, !vt_syscall_write_efer(exit->vcpu, value));
	return vt_complete(exit, vt_wrmsr_safe(msr, value) != 0);
}
