// SPDX-License-Identifier: GPL-2.0
/*
 * What a debugger callback may change on the current vCPU, from VMX root
 * (inside a callback or a VMCALL): which exceptions exit, the monitor trap
 * flag, and the DEBUGCTL bits the hypervisor owns. Each checks the control
 * against the capability MSRs instead of trusting the caller.
 */
#include "exit.h"
#include "intrin.h"
#include <vtice/ioctl.h>

int vt_update_control(u32 field, u32 bits, bool on)
{
	u64 v;

	if (vt_vmread(field, &v) != VT_VMX_OK)
		return -VT_EIO;
	v = on ? v | bits : v & ~(u64)bits;
	return vt_vmwrite(field, v) == VT_VMX_OK ? 0 : -VT_EIO;
}

int vt_set_exception_intercept(u32 vector, bool on)
{
	u64 bitmap;

	if (vector > 31)
		return -VT_EINVAL;
	if (vt_vmread(EXCEPTION_BITMAP, &bitmap) != VT_VMX_OK)
		return -VT_EIO;
	bitmap = on ? bitmap | VT_BIT(vector) : bitmap & ~VT_BIT(vector);
	return vt_vmwrite(EXCEPTION_BITMAP, bitmap) == VT_VMX_OK ? 0 : -VT_EIO;
}

/* MTF: a VM exit after the next guest instruction (SDM 3C 26.5.2). */
int vt_set_mtf(struct vt_vcpu *vcpu, bool on)
{
	if (on && !(vcpu->hv->caps.flags & VTICE_CAP_MTF))
		return -VT_EOPNOTSUPP;
	return vt_update_control(CPU_BASED_VM_EXEC_CONTROL, CPU_BASED_MONITOR_TRAP_FLAG, on);
}

/*
 * MOV-DR exiting (SDM 3C 25.1.3): every MOV to or from DR0-DR7 exits, so
 * a debugger that owns the debug registers can show the guest its own.
 */
int vt_set_mov_dr_exiting(struct vt_vcpu *vcpu, bool on)
{
	u32 allowed1 = (u32)(vcpu->hv->caps.proc >> 32);

	if (on && !(allowed1 & CPU_BASED_MOV_DR_EXITING))
		return -VT_EOPNOTSUPP;
	return vt_update_control(CPU_BASED_VM_EXEC_CONTROL, CPU_BASED_MOV_DR_EXITING, on);
}

/*
 * BTF/LBR for tracing: set in the DEBUGCTL that VM entry loads, invisible to
 * the guest, which keeps reading its own shadow value (exit_msr.c). LBR
 * the guest already uses itself is left to it until it turns it off.
 */
int vt_set_debugctl_owned(struct vt_vcpu *vcpu, u64 bits)
{
	u64 honoured = 0;

	if (vcpu->hv->caps.flags & VTICE_CAP_DEBUGCTL_BTF)
		honoured |= DEBUGCTLMSR_BTF;
	if (vcpu->hv->caps.flags & VTICE_CAP_DEBUGCTL_LBR)
		honoured |= DEBUGCTLMSR_LBR;
	if (bits & ~honoured)
		return -VT_EOPNOTSUPP;
	vcpu->debugctl_owned = bits;
	vcpu->debugctl_yielded = 0;
	vt_debugctl_share(vcpu, vcpu->debugctl_shadow);
	return vt_vmwrite(GUEST_IA32_DEBUGCTL, vcpu->debugctl_shadow | vcpu->debugctl_owned) ==
	       VT_VMX_OK ? 0 : -VT_EIO;
}
