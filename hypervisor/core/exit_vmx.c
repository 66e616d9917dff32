// SPDX-License-Identifier: GPL-2.0
/*
 * VMX instructions (and GETSEC) executed by the guest exit unconditionally
 * (SDM Vol. 3C 25.1.2). vtice offers no nested VMX, and shows the kernel
 * the CPU it saw at boot, VMX included: CPUID.1:ECX.VMX,
 * IA32_FEATURE_CONTROL and the VMX capability MSRs read as bare, and the
 * kernel may set CR4.VMXE (exit_cr.c). Its VMXON is then refused, the way
 * a CPU whose VMX another VMM holds refuses it to a kernel that cannot see
 * that VMM (docs/transparency.md, "VMX is held"). The kernel never enters
 * VMX operation, so every other VMX instruction is #UD, as outside VMX
 * operation (SDM Vol. 3C 31.3: each begins "IF (not in VMX operation)
 * THEN #UD").
 */
#include "exit.h"

/*
 * VMXON's checks in the order of SDM Vol. 3C 31.3: with CR4.VMXE clear
 * (the kernel's view) #UD; else #GP(0), which a CPL > 0 caller gets on
 * any CPU. Register operands and compatibility mode raise #UD before the
 * exit (SDM 3C 25.1.1: #UD has priority over VM exits).
 */
static void vt_refuse_vmxon(struct vt_exit *exit)
{
	if (!(vt_guest_cr4() & X86_CR4_VMXE))
		vt_inject_ud(exit);
	else
		vt_inject_gp0(exit);
}

enum vt_exit_action vt_handle_vmx_instruction(struct vt_exit *exit)
{
	if ((u16)exit->reason == EXIT_REASON_VMON)
		vt_refuse_vmxon(exit);
	else
		vt_inject_ud(exit);
	return VT_EXIT_RESUME;
}
