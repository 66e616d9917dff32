// SPDX-License-Identifier: GPL-2.0
/*
 * EPT violations and misconfigurations (SDM Vol. 3C 29.3.3). With the
 * identity map every access is allowed, so a violation means either a
 * debugger hook (its callback handles it, and also flushes and retries a
 * translation this CPU cached before a hook gave the rights back) or an
 * access above the mapped top. An unhandled one, like any misconfiguration, is a hypervisor bug:
 * log it and give this CPU back to the kernel unvirtualized, which then
 * performs the access natively instead of looping on the exit.
 */
#include "exit.h"
#include "intrin.h"
#include "os.h"

/* SDM 3C 28.2.3: an exit during IRET that unblocked NMIs must re-block them. */
#define EPT_VIOLATION_NMI_UNBLOCK	VT_BIT(12)

enum vt_exit_action vt_handle_ept_violation(struct vt_exit *exit)
{
	const struct vt_callbacks *cb = exit->vcpu->hv->cb;
	u64 gpa = vt_vmread_or0(GUEST_PHYSICAL_ADDRESS);
	u32 idt;

	/* An event cut short is delivered again by vt_exit_handler (exit.c). */
	if (cb && cb->ept_violation && cb->ept_violation(exit->vcpu, exit, gpa, exit->qual)) {
		idt = (u32)vt_vmread_or0(IDT_VECTORING_INFO_FIELD);
		if ((exit->qual & EPT_VIOLATION_NMI_UNBLOCK) && !(idt & INTR_INFO_VALID_MASK))
			vt_vmwrite(GUEST_INTERRUPTIBILITY_INFO,
				   vt_vmread_or0(GUEST_INTERRUPTIBILITY_INFO) |
				   GUEST_INTR_STATE_NMI);
		return VT_EXIT_RESUME;
	}
	vt_root_report(exit->vcpu, VT_RE_EPT_VIOLATION, gpa, exit->qual, vt_vmread_or0(GUEST_RIP), 0);
	return VT_EXIT_LEAVE_VMX;
}

enum vt_exit_action vt_handle_ept_misconfig(struct vt_exit *exit)
{
	u64 gpa = vt_vmread_or0(GUEST_PHYSICAL_ADDRESS);
	int level = 0;
	u64 *leaf = vt_ept_leaf(&exit->vcpu->hv->ept, gpa, &level);

	vt_root_report(exit->vcpu, VT_RE_EPT_MISCONFIG, gpa, leaf ? *leaf : 0, (u64)level, 0);
	return VT_EXIT_LEAVE_VMX;
}
