// SPDX-License-Identifier: GPL-2.0
/*
 * Running nested, under a parent hypervisor (KVM, Hyper-V, VMware): the
 * kernel found it at boot through CPUID.1:ECX[31] and the 0x4000000x leaves,
 * and asks it for paravirtual services with VMCALL (KVM: PV send-IPI,
 * sched-yield, kick-CPU; Hyper-V: TLB flushes, IPIs). Those VMCALLs exit to
 * vtice, whose guest the kernel now is; vtice passes each to the parent, as
 * if the kernel had made it, and hands back the answer. vtice's own VMCALLs
 * carry its key and never reach the parent.
 *
 * Only kernel-mode VMCALLs go up: VMX root runs at CPL 0, so a user-mode
 * VMCALL passed on would reach the parent with the kernel's privilege. It
 * gets what the parent would give it: KVM answers -KVM_EPERM in RAX and
 * skips the instruction (kvm_emulate_hypercall), the others raise #UD, as
 * a bare CPU does.
 */
#include "exit.h"
#include "intrin.h"

#define VT_KVM_EPERM	1	/* uapi linux/kvm_para.h: KVM_EPERM is EPERM */

enum vt_parent vt_find_parent(void)
{
	struct vt_cpuid_regs r;

	vt_cpuid(1, 0, &r);
	if (!(r.ecx & CPUID_1_ECX_HYPERVISOR))
		return VT_PARENT_NONE;
	vt_cpuid(0x40000000, 0, &r);
	/* "KVMKVMKVM\0\0\0" in EBX, ECX, EDX (Documentation/virt/kvm/x86/cpuid.rst) */
	if (r.ebx == 0x4b4d564b && r.ecx == 0x564b4d56 && r.edx == 0x4d)
		return VT_PARENT_KVM;
	return VT_PARENT_OTHER;
}

/* KVM's answer to a hypercall from CPL > 0, truncated outside 64-bit mode. */
static void vt_kvm_refuse_user_hypercall(struct vt_exit *exit)
{
	u64 ret = (u64)-VT_KVM_EPERM;

	if (!(vt_vmread_or0(GUEST_CS_AR_BYTES) & VMX_AR_L_MASK))
		ret = (u32)ret;
	exit->regs->rax = ret;
	vt_advance_rip(exit);
}

bool vt_forward_to_parent(struct vt_exit *exit)
{
	enum vt_parent parent = exit->vcpu->hv->parent;

	if (parent == VT_PARENT_NONE)
		return false;
	if (vt_guest_cpl() != 0) {
		if (parent != VT_PARENT_KVM)
			return false;
		vt_kvm_refuse_user_hypercall(exit);
		return true;
	}
	vt_parent_vmcall(exit->regs);
	vt_advance_rip(exit);
	return true;
}
