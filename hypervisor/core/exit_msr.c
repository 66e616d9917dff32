// SPDX-License-Identifier: GPL-2.0
/*
 * RDMSR/WRMSR exits: only the MSRs set in the MSR bitmap (see vcpu.c) and
 * MSRs outside the bitmap's two ranges exit (SDM Vol. 3C 25.1.3).
 *  - IA32_FEATURE_CONTROL and the VMX capability MSRs do not exit: the
 *    kernel reads them as it did at boot (vtice holds VMX, exit_vmx.c).
 *  - IA32_DEBUGCTL is shadowed: the guest reads back what it wrote while
 *    the hypervisor may own BTF/LBR for tracing (and LBR for the crash
 *    snapshots, debug/lbr.c); a guest that turns LBR on itself gets it.
 *  - The LBR stack's MSRs exit only while the hypervisor owns LBR: they
 *    act on the copy the kernel would find on the bare CPU (lbr_view.h).
 *  - IA32_EFER exits only while the syscall trap is armed, which hides
 *    the cleared SCE bit (syscall_trap.c).
 *  - IA32_TSC and IA32_TSC_DEADLINE exit once a stop's time is hidden
 *    from the guest's TSC (tsc_offset=1): root adds what the CPU does not
 *    offset (tsc_hide.h).
 *  - IA32_PERF_GLOBAL_CTRL is the guest's in the guest and 0 in root
 *    (vmx_caps.c); it exits only where the CPU cannot save the guest's
 *    value at VM exit, so that a write reaches the guest-state field.
 *  - Everything else is passed through; a #GP the real access would take
 *    is reflected into the guest.
 */
#include "exit.h"
#include "intrin.h"
#include <vtice/ioctl.h>

/*
 * Bits the hypervisor owns show as the guest wrote them; the others as the
 * CPU left them. The CPU changes DEBUGCTL on its own: with
 * FREEZE_LBRS_ON_PMI a PMI clears LBR (SDM Vol. 3B 18.4.7), and "save
 * debug controls" brings that into the guest-state field at every exit
 * (SDM Vol. 3C 28.3.1), so perf reads what it would on the bare CPU.
 */
static u64 vt_read_debugctl(struct vt_vcpu *vcpu)
{
	u64 live;

	if (!(vcpu->hv->ctls.exit & VM_EXIT_SAVE_DEBUG_CONTROLS) ||
	    vt_vmread(GUEST_IA32_DEBUGCTL, &live) != VT_VMX_OK)
		return vcpu->debugctl_shadow;
	return (live & ~vcpu->debugctl_owned) | (vcpu->debugctl_shadow & vcpu->debugctl_owned);
}

/* What RDMSR of msr gives the guest; false: it takes a #GP. */
static bool vt_read_guest_msr(struct vt_vcpu *vcpu, u32 msr, u64 *value)
{
	u64 *lbr;

	if (vt_tsc_hide_rdmsr(vcpu, msr, value))
		return true;
	if (msr == MSR_IA32_DEBUGCTLMSR)
		*value = vt_read_debugctl(vcpu);
	else if ((lbr = vt_lbr_view_slot(vcpu, msr)))
		*value = *lbr;
	else if (msr == MSR_EFER && vcpu->sys.armed)
		*value = vt_syscall_read_efer(vcpu);
	else if (msr == MSR_CORE_PERF_GLOBAL_CTRL && vt_perf_global_switched(vcpu))
		*value = vt_vmread_or0(GUEST_IA32_PERF_GLOBAL_CTRL);
	else
		return vt_rdmsr_safe(msr, value) == 0;
	return true;
}

enum vt_exit_action vt_handle_rdmsr(struct vt_exit *exit)
{
	struct vt_guest_regs *r = exit->regs;
	u64 value = 0;

	if (!vt_read_guest_msr(exit->vcpu, (u32)r->rcx, &value))
		return vt_complete(exit, true);
	r->rax = (u32)value;
	r->rdx = value >> 32;
	return vt_complete(exit, false);
}

/*
 * The bits the hypervisor hands over while the guest uses them itself. A
 * kernel that turns LBR on (perf) wants the stack as its own, with its own
 * LBR_SELECT filter and freeze-on-PMI, and LBR is one bit both can want:
 * owning it would also make a PMI's freeze invisible to perf. BTF is never
 * shared: a tracer that owns it needs the #DB it causes.
 */
#define VT_DEBUGCTL_SHAREABLE	DEBUGCTLMSR_LBR

void vt_debugctl_share(struct vt_vcpu *vcpu, u64 guest)
{
	u64 wanted = vcpu->debugctl_owned | vcpu->debugctl_yielded;

	vcpu->debugctl_yielded = wanted & VT_DEBUGCTL_SHAREABLE & guest;
	vcpu->debugctl_owned = wanted & ~vcpu->debugctl_yielded;
	vt_lbr_view_sync(vcpu);
}

/*
 * Let the real MSR judge the guest's value (reserved bits #GP) and say what
 * sticks (a CPU or emulator may drop bits it does not implement): the guest
 * later reads back exactly what it would have read without us. VM entry
 * then loads that value, plus the bits the hypervisor owns, from the
 * guest-state field. In VMX root DEBUGCTL is 0 after every exit (SDM 3C
 * 28.5.1), so 0 is what we put back. LBR is left out of the trial write
 * where the probe found it honoured: set in VMX root it would record the
 * hypervisor's own branches into the guest's stack.
 */
static bool vt_write_debugctl(struct vt_vcpu *vcpu, u64 value)
{
	u64 lbr = (vcpu->hv->caps.flags & VTICE_CAP_DEBUGCTL_LBR) ? value & DEBUGCTLMSR_LBR : 0;
	u64 effective = 0;

	if (vt_wrmsr_safe(MSR_IA32_DEBUGCTLMSR, value & ~lbr))
		return false;
	vt_rdmsr_safe(MSR_IA32_DEBUGCTLMSR, &effective);
	vt_wrmsr_safe(MSR_IA32_DEBUGCTLMSR, 0);
	effective |= lbr;
	vcpu->debugctl_shadow = effective;
	vt_debugctl_share(vcpu, effective);
	vt_vmwrite(GUEST_IA32_DEBUGCTL, effective | vcpu->debugctl_owned);
	return true;
}

bool vt_perf_global_switched(const struct vt_vcpu *vcpu)
{
	return (vcpu->hv->ctls.entry & VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL) != 0;
}

/*
 * The real MSR judges the value (reserved bits #GP), and root's 0 goes
 * back at once; the next VM entry loads what the guest wrote.
 */
static bool vt_write_perf_global(u64 value)
{
	u64 effective = 0;

	if (vt_wrmsr_safe(MSR_CORE_PERF_GLOBAL_CTRL, value))
		return false;
	vt_rdmsr_safe(MSR_CORE_PERF_GLOBAL_CTRL, &effective);
	vt_wrmsr_safe(MSR_CORE_PERF_GLOBAL_CTRL, 0);
	vt_vmwrite(GUEST_IA32_PERF_GLOBAL_CTRL, effective);
	return true;
}

enum vt_exit_action vt_handle_wrmsr(struct vt_exit *exit)
{
	struct vt_guest_regs *r = exit->regs;
	u32 msr = (u32)r->rcx;
	u64 value = (r->rdx << 32) | (u32)r->rax, *lbr;
	bool fault;

	if ((lbr = vt_lbr_view_slot(exit->vcpu, msr)))
		return vt_complete(exit, !vt_lbr_view_write(msr, lbr, value));
	if (msr == MSR_IA32_DEBUGCTLMSR)
		return vt_complete(exit, !vt_write_debugctl(exit->vcpu, value));
	if (vt_tsc_hide_wrmsr(exit->vcpu, msr, value, &fault))
		return vt_complete(exit, fault);
	if (msr == MSR_EFER && exit->vcpu->sys.armed)
		return vt_complete(exit, !vt_syscall_write_efer(exit->vcpu, value));
	if (msr == MSR_CORE_PERF_GLOBAL_CTRL && vt_perf_global_switched(exit->vcpu))
		return vt_complete(exit, !vt_write_perf_global(value));
	return vt_complete(exit, vt_wrmsr_safe(msr, value) != 0);
}
