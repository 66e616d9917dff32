// SPDX-License-Identifier: GPL-2.0
/*
 * Exceptions and NMIs (exception bitmap, SDM Vol. 3C 25.2), NMI windows and
 * the monitor trap flag. The exception bitmap is 0 until a debugger sets
 * bits; whatever its callback does not consume is re-injected unchanged.
 */
#include "exit.h"
#include "intrin.h"

static bool vt_is_soft_event(u32 type)
{
	return type == INTR_TYPE_SOFT_INTR || type == INTR_TYPE_PRIV_SW_EXCEPTION ||
	       type == INTR_TYPE_SOFT_EXCEPTION;
}

/*
 * Deliver the exit's event to the guest as it would have been (SDM 3C
 * 27.6.1). A #PF that exits leaves CR2 alone, its address is in the exit
 * qualification (27.1): the guest's handler reads it from CR2, which VM
 * entry does not switch.
 */
void vt_reflect_event(struct vt_exit *exit, u32 info)
{
	u32 type = info & INTR_INFO_INTR_TYPE_MASK;

	if (type == INTR_TYPE_HARD_EXCEPTION && (info & INTR_INFO_VECTOR_MASK) == X86_TRAP_PF)
		vt_write_cr2(vt_vmread_or0(EXIT_QUALIFICATION));

	if (info & INTR_INFO_DELIVER_CODE_MASK)
		vt_vmwrite(VM_ENTRY_EXCEPTION_ERROR_CODE,
			   vt_vmread_or0(VM_EXIT_INTR_ERROR_CODE));
	if (vt_is_soft_event(type))
		vt_vmwrite(VM_ENTRY_INSTRUCTION_LEN, vt_vmread_or0(VM_EXIT_INSTRUCTION_LEN));
	vt_vmwrite(VM_ENTRY_INTR_INFO_FIELD,
		   info & (INTR_INFO_VECTOR_MASK | INTR_INFO_INTR_TYPE_MASK |
			   INTR_INFO_DELIVER_CODE_MASK | INTR_INFO_VALID_MASK));
	exit->injected = true;
}

/*
 * The guest's own NMI, taken by NMI exiting. Injected now unless the guest
 * blocks NMIs (virtual-NMI blocking) or sits in a MOV-SS/STI shadow, where
 * VM entry would refuse the injection (SDM 3C 26.3.1.5); then held until
 * an NMI window opens (25.2, vt_handle_nmi_window). Held too while a TF
 * step holds events or a tracer gates them (events.c), whose release
 * opens the window.
 */
static void vt_deliver_guest_nmi(struct vt_exit *exit)
{
	u64 blocking = vt_vmread_or0(GUEST_INTERRUPTIBILITY_INFO) &
		       (GUEST_INTR_STATE_NMI | GUEST_INTR_STATE_MOV_SS | GUEST_INTR_STATE_STI);

	bool kept = exit->vcpu->holding_events || exit->vcpu->gating_events;

	if (blocking || exit->injected || kept) {
		exit->vcpu->nmi_pending = true;
		/* Held or gated (events.c): the release or the gate lets it in. */
		if (!kept)
			vt_update_control(CPU_BASED_VM_EXEC_CONTROL, CPU_BASED_NMI_WINDOW_EXITING, true);
		return;
	}
	vt_vmwrite(VM_ENTRY_INTR_INFO_FIELD, X86_TRAP_NMI | INTR_TYPE_NMI_INTR | INTR_INFO_VALID_MASK);
	exit->injected = true;
}

/* An NMI for this CPU: the debugger's own IPI, else the guest's. */
void vt_take_nmi(struct vt_exit *exit)
{
	const struct vt_callbacks *cb = exit->vcpu->hv->cb;

	if (!(cb && cb->nmi && cb->nmi(exit->vcpu, exit)))
		vt_deliver_guest_nmi(exit);
}

enum vt_exit_action vt_handle_exception_nmi(struct vt_exit *exit)
{
	const struct vt_callbacks *cb = exit->vcpu->hv->cb;
	u32 info = (u32)vt_vmread_or0(VM_EXIT_INTR_INFO);
	u32 vector = info & INTR_INFO_VECTOR_MASK;

	/* IRET unblocked NMIs before faulting: re-block them (SDM 3C 28.2.3). */
	if ((info & INTR_INFO_UNBLOCK_NMI) && vector != 8)
		vt_vmwrite(GUEST_INTERRUPTIBILITY_INFO,
			   vt_vmread_or0(GUEST_INTERRUPTIBILITY_INFO) | GUEST_INTR_STATE_NMI);
	if ((info & INTR_INFO_INTR_TYPE_MASK) == INTR_TYPE_NMI_INTR) {
		vt_take_nmi(exit);
		return VT_EXIT_RESUME;
	}
	if (vector == X86_TRAP_UD && exit->vcpu->sys.armed && vt_syscall_trap_on_ud(exit))
		return VT_EXIT_RESUME;
	if (cb && cb->exception && cb->exception(exit->vcpu, exit, info))
		return VT_EXIT_RESUME;
	vt_reflect_event(exit, info);
	return VT_EXIT_RESUME;
}

/* Open NMI window: deliver the NMI a handler deferred (vcpu->nmi_pending). */
enum vt_exit_action vt_handle_nmi_window(struct vt_exit *exit)
{
	vt_update_control(CPU_BASED_VM_EXEC_CONTROL, CPU_BASED_NMI_WINDOW_EXITING, false);
	if (exit->vcpu->nmi_pending && !exit->vcpu->holding_events && !exit->vcpu->gating_events) {
		exit->vcpu->nmi_pending = false;
		vt_vmwrite(VM_ENTRY_INTR_INFO_FIELD,
			   X86_TRAP_NMI | INTR_TYPE_NMI_INTR | INTR_INFO_VALID_MASK);
		exit->injected = true;
	}
	return VT_EXIT_RESUME;
}

enum vt_exit_action vt_handle_mtf(struct vt_exit *exit)
{
	const struct vt_callbacks *cb = exit->vcpu->hv->cb;

	if (!(cb && cb->mtf && cb->mtf(exit->vcpu, exit)))
		vt_update_control(CPU_BASED_VM_EXEC_CONTROL, CPU_BASED_MONITOR_TRAP_FLAG, false);
	return VT_EXIT_RESUME;
}
