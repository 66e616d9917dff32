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
 * gets #UD, as from a bare CPU and from Hyper-V (KVM itself answers a
 * user-mode VMCALL with -KVM_EPERM instead: docs/hypervisor.md, "Nested").
 */
#include "exit.h"
#include "intrin.h"

bool vt_cpu_has_parent_hypervisor(void)
{
	struct vt_cpuid_regs r;

	vt_cpuid(1, 0, &r);
	return (r.ecx & CPUID_1_ECX_HYPERVISOR) != 0;
}

bool vt_forward_to_parent(struct vt_exit *exit)
{
	if (!exit->vcpu->hv->parent_hypervisor || vt_guest_cpl() != 0)
		return false;
	vt_parent_vmcall(exit->regs);
	vt_advance_rip(exit);
	return true;
}
