// SPDX-License-Identifier: GPL-2.0
/*
 * Holding the guest's interrupts off, for a single step done with
 * RFLAGS.TF: an interrupt delivered during the step would push TF into
 * its frame, where the guest could read it. While held, external
 * interrupts exit ("external-interrupt exiting", SDM Vol. 3C 25.6.1) and
 * are acknowledged by the exit ("acknowledge interrupt on exit", 25.7.1),
 * which hands us the vector; NMIs wait in nmi_pending (exit_exception.c).
 * On release each is injected when the guest can take it: an
 * interrupt-window exit (25.6.2) for interrupts, highest vector first, so
 * the guest's EOIs retire the local APIC's in-service bits in the order
 * it set them; an NMI window for the NMI.
 *
 * A tracer gates events instead (vt_gate_events): they exit and wait the
 * same way, and the tracer lets them in itself, one at a time, when it
 * chooses (vt_deliver_held_event); the windows stay shut until the gate
 * opens.
 */
#include "exit.h"
#include "intrin.h"

/* Both or neither: without the acknowledgement the interrupt would stay pending and exit forever. */
bool vt_can_hold_events(const struct vt_hv *hv)
{
	return ((hv->caps.exit >> 32) & VM_EXIT_ACK_INTR_ON_EXIT) &&
	       ((hv->caps.pin >> 32) & PIN_BASED_EXT_INTR_MASK);
}

static int vt_set_interrupt_exiting(struct vt_vcpu *vcpu, bool on)
{
	int ret;

	if (on && !vt_can_hold_events(vcpu->hv))
		return -VT_EOPNOTSUPP;
	ret = vt_update_control(VM_EXIT_CONTROLS, VM_EXIT_ACK_INTR_ON_EXIT, on);
	return ret ? ret : vt_update_control(PIN_BASED_VM_EXEC_CONTROL, PIN_BASED_EXT_INTR_MASK, on);
}

static bool vt_irqs_held(const struct vt_vcpu *vcpu)
{
	return vcpu->held_irqs[0] | vcpu->held_irqs[1] | vcpu->held_irqs[2] | vcpu->held_irqs[3];
}

static void vt_set_proc(u32 bits, bool on)
{
	vt_update_control(CPU_BASED_VM_EXEC_CONTROL, bits, on);
}

/* Interrupts exit for a hold or a gate; windows open only when neither keeps them. */
static bool vt_events_kept(const struct vt_vcpu *vcpu)
{
	return vcpu->holding_events || vcpu->gating_events;
}

/* What waits goes in through the windows, when the guest can take it. */
static void vt_open_windows(struct vt_vcpu *vcpu)
{
	if (vt_irqs_held(vcpu))
		vt_set_proc(CPU_BASED_INTR_WINDOW_EXITING, true);
	if (vcpu->nmi_pending)
		vt_set_proc(CPU_BASED_NMI_WINDOW_EXITING, true);
}

int vt_hold_events(struct vt_vcpu *vcpu, bool on)
{
	int ret;

	if (on == vcpu->holding_events)
		return 0;
	ret = vt_set_interrupt_exiting(vcpu, on || vcpu->gating_events);
	if (ret)
		return ret;
	vcpu->holding_events = on;
	if (on)	/* a window opened before the hold must not inject into the step */
		vt_set_proc(CPU_BASED_INTR_WINDOW_EXITING | CPU_BASED_NMI_WINDOW_EXITING, false);
	else if (!vcpu->gating_events)
		vt_open_windows(vcpu);
	return 0;
}

int vt_gate_events(struct vt_vcpu *vcpu, bool on)
{
	int ret;

	if (on == vcpu->gating_events)
		return 0;
	ret = vt_set_interrupt_exiting(vcpu, on || vcpu->holding_events);
	if (ret)
		return ret;
	vcpu->gating_events = on;
	if (on)
		vt_set_proc(CPU_BASED_INTR_WINDOW_EXITING | CPU_BASED_NMI_WINDOW_EXITING, false);
	else if (!vcpu->holding_events)
		vt_open_windows(vcpu);
	return 0;
}

/* Only while holding or gating (or just after): the exit acknowledged the vector. */
enum vt_exit_action vt_handle_external_interrupt(struct vt_exit *exit)
{
	u32 info = (u32)vt_vmread_or0(VM_EXIT_INTR_INFO);
	u32 vector = info & INTR_INFO_VECTOR_MASK;

	if (!(info & INTR_INFO_VALID_MASK))
		return VT_EXIT_RESUME;	/* not acknowledged: still pending in the APIC */
	exit->vcpu->held_irqs[vector / 64] |= VT_BIT(vector % 64);
	if (!vt_events_kept(exit->vcpu))
		vt_set_proc(CPU_BASED_INTR_WINDOW_EXITING, true);
	return VT_EXIT_RESUME;
}

static s32 vt_highest_held(const struct vt_vcpu *vcpu)
{
	s32 word, bit;

	for (word = 3; word >= 0; word--)
		for (bit = 63; bit >= 0; bit--)
			if (vcpu->held_irqs[word] & VT_BIT(bit))
				return word * 64 + bit;
	return -1;
}

/*
 * An event for the guest at the next VM entry, waking a halted CPU as the
 * event would (SDM 3C 26.6.2: entry may inject into the HLT state, and the
 * CPU is then active in the handler).
 */
static void vt_queue_event(u32 info)
{
	vt_vmwrite(VM_ENTRY_INTR_INFO_FIELD, info | INTR_INFO_VALID_MASK);
	if (vt_vmread_or0(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT)
		vt_vmwrite(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
}

/*
 * A tracer's gate: one event waiting goes in now, if the guest can take
 * it as a window exit would find: an NMI unless NMIs are blocked, else an
 * interrupt with RFLAGS.IF = 1; never under STI or MOV-SS blocking, nor
 * beside an event already queued (SDM 3C 26.3.1.5), nor into a TF step
 * (a hold), whose TF the event's frame would show.
 */
bool vt_deliver_held_event(struct vt_vcpu *vcpu)
{
	u64 intr = vt_vmread_or0(GUEST_INTERRUPTIBILITY_INFO);
	s32 vector;

	if (vcpu->holding_events || (vt_vmread_or0(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID_MASK) ||
	    (intr & (GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS)) ||
	    vt_vmread_or0(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_WAIT_SIPI)
		return false;
	if (vcpu->nmi_pending && !(intr & GUEST_INTR_STATE_NMI)) {
		vcpu->nmi_pending = false;
		vt_queue_event(X86_TRAP_NMI | INTR_TYPE_NMI_INTR);
		return true;
	}
	vector = vt_highest_held(vcpu);
	if (vector < 0 || !(vt_vmread_or0(GUEST_RFLAGS) & X86_EFLAGS_IF))
		return false;
	vcpu->held_irqs[vector / 64] &= ~VT_BIT(vector % 64);
	vt_queue_event((u32)vector | INTR_TYPE_EXT_INTR);
	return true;
}

/*
 * A window asked for while the guest sits in HLT. On the SDM's word the
 * window's exit comes right after VM entry and wakes the CPU (Vol. 3C
 * 26.6.5); Bochs 3.0 leaves a halted CPU asleep until an interrupt
 * arrives (cpu/event.cc, handleWaitForEvent), and the vector held may be
 * the local APIC timer's, after which a NOHZ-idle CPU may see no other.
 * Deliver the event at this entry instead, as the window's exit would;
 * the windows stay for what is left.
 */
void vt_wake_halted_windows(struct vt_vcpu *vcpu)
{
	u64 windows = CPU_BASED_INTR_WINDOW_EXITING | CPU_BASED_NMI_WINDOW_EXITING;

	/* Kept first: a traced CPU's every step is gated, and takes no VMREAD here. */
	if (!vt_events_kept(vcpu) && (vt_vmread_or0(CPU_BASED_VM_EXEC_CONTROL) & windows) &&
	    vt_vmread_or0(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT)
		vt_deliver_held_event(vcpu);
}

void vt_events_reset(struct vt_vcpu *vcpu)
{
	vcpu->held_irqs[0] = vcpu->held_irqs[1] = vcpu->held_irqs[2] = vcpu->held_irqs[3] = 0;
	vcpu->nmi_pending = false;
	vt_set_proc(CPU_BASED_INTR_WINDOW_EXITING | CPU_BASED_NMI_WINDOW_EXITING, false);
}

/*
 * The guest can take an interrupt (RFLAGS.IF = 1, no STI or MOV-SS
 * blocking): inject the highest held vector, and wait for the next window
 * for the rest.
 */
enum vt_exit_action vt_handle_interrupt_window(struct vt_exit *exit)
{
	struct vt_vcpu *vcpu = exit->vcpu;
	s32 vector = vt_highest_held(vcpu);

	if (vt_events_kept(vcpu) || vector < 0) {
		vt_set_proc(CPU_BASED_INTR_WINDOW_EXITING, vector >= 0 && !vt_events_kept(vcpu));
		return VT_EXIT_RESUME;
	}
	vcpu->held_irqs[vector / 64] &= ~VT_BIT(vector % 64);
	vt_vmwrite(VM_ENTRY_INTR_INFO_FIELD, (u32)vector | INTR_TYPE_EXT_INTR | INTR_INFO_VALID_MASK);
	exit->injected = true;
	vt_set_proc(CPU_BASED_INTR_WINDOW_EXITING, vt_irqs_held(vcpu));
	return VT_EXIT_RESUME;
}
