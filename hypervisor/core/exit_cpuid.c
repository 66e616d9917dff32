// SPDX-License-Identifier: GPL-2.0
/*
 * CPUID exits unconditionally in VMX non-root (SDM Vol. 3C 25.1.2). The
 * guest gets the bare CPU's answer, VMX included (CPUID.1:ECX[5]: the
 * kernel saw it at boot; vtice holds VMX, exit_vmx.c), and nothing of
 * vtice: no hypervisor-present bit (CPUID.1:ECX[31]) or
 * 0x4000000x signature of its own. Those leaves are answered by the CPU
 * below: the real one, as without a hypervisor, or under a parent
 * hypervisor, the parent, whose bit then stays set, as the kernel saw it
 * at boot (parent.c).
 */
#include "exit.h"
#include "intrin.h"

enum vt_exit_action vt_handle_cpuid(struct vt_exit *exit)
{
	struct vt_guest_regs *r = exit->regs;
	struct vt_cpuid_regs out;
	u32 leaf = (u32)r->rax;

	vt_cpuid(leaf, (u32)r->rcx, &out);
	if (leaf == 1 && exit->vcpu->hv->parent == VT_PARENT_NONE)
		out.ecx &= ~(u32)CPUID_1_ECX_HYPERVISOR;
	/* 32-bit results zero-extend, as a native CPUID does (SDM 2A CPUID) */
	r->rax = out.eax;
	r->rbx = out.ebx;
	r->rcx = out.ecx;
	r->rdx = out.edx;
	vt_advance_rip(exit);
	return VT_EXIT_RESUME;
}
