// SPDX-License-Identifier: GPL-2.0
/*
 * Exits that end virtualization on this CPU: triple fault, failed VM
 * entries and reasons this hypervisor never enables. Record what is known
 * (root_log.h),
 * then leave VMX at the guest's RIP (not advanced), so the kernel continues
 * on bare metal exactly as it would have without us; for a triple fault
 * that means the fault recurs natively and the machine resets, as it would
 * have anyway, but with our log line first.
 */
#include "exit.h"
#include "intrin.h"
#include "os.h"

enum vt_exit_action vt_handle_triple_fault(struct vt_exit *exit)
{
	const struct vt_callbacks *cb = exit->vcpu->hv->cb;

	vt_root_report(exit->vcpu, VT_RE_TRIPLE_FAULT, vt_vmread_or0(GUEST_RIP), vt_vmread_or0(GUEST_RSP),
		      vt_vmread_or0(GUEST_CR3), vt_vmread_or0(IDT_VECTORING_INFO_FIELD));
	/* A debugger gets to look first (the stub stops the machine here). */
	if (cb && cb->triple_fault)
		cb->triple_fault(exit->vcpu, exit);
	return VT_EXIT_LEAVE_VMX;
}

enum vt_exit_action vt_handle_fatal(struct vt_exit *exit)
{
	vt_root_report(exit->vcpu, VT_RE_UNEXPECTED_EXIT, exit->reason, exit->qual,
		      vt_vmread_or0(GUEST_RIP), 0);
	return VT_EXIT_LEAVE_VMX;
}
