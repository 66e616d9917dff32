// SPDX-License-Identifier: GPL-2.0
/*
 * One guest instruction, then an exit (single_step.h); for the tracer, one
 * branch, then an exit.
 *
 * With the monitor trap flag the CPU does it all (SDM Vol. 3C 26.5.2).
 * Without it, RFLAGS.TF raises a single-step #DB after the instruction
 * (SDM 3A 18.3.1.4), which exits through the exception bitmap. TF is the
 * guest's own flag, so everything that could show it is handled here:
 *
 * - Interrupts and NMIs would be delivered with TF in their frame: they
 *   are held for the step (core/events.c) and delivered after it.
 * - An exception the instruction raises would be too: every vector exits
 *   during the step and is delivered by us with the guest's own TF; a
 *   debug register lent for the moment then traps the handler's first
 *   instruction (a fault-class #DB, before it runs), which is where an MTF
 *   step would end as well. INT n, which the exception bitmap cannot see,
 *   is injected by us the same way instead of being run.
 * - PUSHF stores RFLAGS: TF is cleared in the copy once the step ends,
 *   unless the guest had set TF itself.
 * - SYSCALL and SYSRET load RFLAGS, from FMASK and R11, and the CPU then
 *   raises no single-step trap: the step runs them without TF and a lent
 *   debug register ends it at their target (the kernel's entry, RCX).
 *   Without a free register, TF is set and cleared in SYSCALL's R11.
 * - POPF and IRET load RFLAGS: the TF they load is the guest's.
 *
 * The tracer's steps may be branch steps (btf_block.h): IA32_DEBUGCTL.BTF
 * is set as well, where the CPU honours it and the straight-line code up to
 * the next branch holds none of the instructions above. Anyone else who
 * asks for a step while one runs turns it back into a plain one.
 *
 * Linux's IDT is a long-mode IDT, and its code and stack segments have base
 * 0 (in compatibility mode too), so RIP and RSP are the linear addresses.
 */
#include "single_step.h"
#include "btf_block.h"
#include "hooks_priv.h"
#include "../core/intrin.h"
#include <vtice/ioctl.h>

#define VT_INSN_MAX		15
#define VT_DR7_ENABLES(p)	(3ull << (2 * (p)))	/* Lp and Gp */
#define VT_DR7_LOCAL(p)		(1ull << (2 * (p)))
#define VT_DR7_CONTROL(p)	(0xfull << (16 + 4 * (p)))	/* R/Wp and LENp */
#define VT_CS_AR_LONG		VT_BIT(13)
#define VT_GATE_PRESENT		VT_BIT(47)

static int vt_own_read(const struct vt_vcpu *vcpu, u64 gva, void *buf, u32 len)
{
	return vt_hooks.own_mem ? vt_hooks.own_mem(vcpu, gva, buf, len, false) : -VT_EFAULT;
}

static int vt_own_write(const struct vt_vcpu *vcpu, u64 gva, const void *buf, u32 len)
{
	return vt_hooks.own_mem ? vt_hooks.own_mem(vcpu, gva, (void *)buf, len, true) : -VT_EFAULT;
}

void vt_single_step_prefer_tf(bool on)
{
	vt_hooks.prefer_tf = on;
}

void vt_single_step_trace_tf(bool on)
{
	VT_STORE_RELEASE(vt_hooks.trace_tf, on);
}

/* While the tracer steps with TF every step is a TF step: one per CPU serves everyone. */
static bool vt_mtf_usable(const struct vt_hv *hv)
{
	return (hv->caps.flags & VTICE_CAP_MTF) && !vt_hooks.prefer_tf &&
	       !VT_LOAD_ACQUIRE(vt_hooks.trace_tf);
}

bool vt_single_step_uses_tf(const struct vt_hv *hv)
{
	return !vt_mtf_usable(hv);
}

/* A TF step holds interrupts off (core/events.c). */
bool vt_single_step_supported(const struct vt_hv *hv)
{
	return vt_mtf_usable(hv) || vt_can_hold_events(hv);
}

/*
 * MTF: an interrupt due now would be delivered first and the step would
 * end in its handler. Blocking by STI holds interrupts off for exactly one
 * instruction; VM entry allows it only with RFLAGS.IF = 1, without MOV-SS
 * blocking and without an event being injected (SDM 3C 26.3.1.5).
 */
static void vt_mtf_hold_interrupts(void)
{
	u64 intr = vt_vmread_or0(GUEST_INTERRUPTIBILITY_INFO);

	if (!(vt_vmread_or0(GUEST_RFLAGS) & X86_EFLAGS_IF))
		return;		/* already held off */
	if (intr & (GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS))
		return;
	if ((vt_vmread_or0(IDT_VECTORING_INFO_FIELD) & INTR_INFO_VALID_MASK) ||
	    (vt_vmread_or0(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID_MASK))
		return;
	vt_vmwrite(GUEST_INTERRUPTIBILITY_INFO, intr | GUEST_INTR_STATE_STI);
}

static bool vt_is_prefix(u8 b, bool long_mode)
{
	switch (b) {
	case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
	case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
		return true;
	default:
		return long_mode && (b & 0xf0) == 0x40;	/* REX */
	}
}

/* What the instruction at RIP does with RFLAGS; for INT n, its vector and length. */
static enum vt_tf_insn vt_tf_classify(const struct vt_vcpu *vcpu, u8 *vector, u32 *len)
{
	bool long_mode = vt_vmread_or0(GUEST_CS_AR_BYTES) & VT_CS_AR_LONG;
	u8 b[VT_INSN_MAX];
	int n = vt_own_read(vcpu, vt_vmread_or0(GUEST_RIP), b, sizeof(b));
	int i = 0;

	while (i < n && vt_is_prefix(b[i], long_mode))
		i++;
	if (i >= n)
		return VT_TF_PLAIN;
	if (b[i] == 0x9c)
		return VT_TF_PUSHF;
	if (b[i] == 0xf4) {
		*len = (u32)i + 1;
		return VT_TF_HALTED;
	}
	if (b[i] == 0x9d || b[i] == 0xcf)
		return VT_TF_LOADS_FLAGS;
	if (i + 1 >= n)
		return VT_TF_PLAIN;
	if (b[i] == 0xcd) {
		*vector = b[i + 1];
		*len = (u32)i + 2;
		return VT_TF_INT_N;
	}
	if (b[i] == 0x0f && b[i + 1] == 0x05)
		return VT_TF_SYSCALL;
	if (b[i] == 0x0f && b[i + 1] == 0x07)
		return VT_TF_SYSRET;
	return VT_TF_PLAIN;
}

/* The handler of IDT vector vector: a 16-byte long-mode gate (SDM 3A 6.14.1). */
static bool vt_tf_handler(const struct vt_vcpu *vcpu, u32 vector, u64 *handler)
{
	u64 gate[2];

	if ((u64)vector * 16 + 15 > vt_vmread_or0(GUEST_IDTR_LIMIT))
		return false;
	if (vt_own_read(vcpu, vt_vmread_or0(GUEST_IDTR_BASE) + vector * 16, gate,
			     sizeof(gate)) != sizeof(gate) || !(gate[0] & VT_GATE_PRESENT))
		return false;
	*handler = (gate[0] & 0xffff) | ((gate[0] >> 32) & 0xffff0000ull) | (gate[1] << 32);
	return true;
}

/*
 * An instruction breakpoint on the handler, in a slot the effective DR7
 * leaves disabled (GUEST_DR7 holds the merged value while the debugger
 * owns the registers, dr.c). No guest instruction runs while it is lent:
 * it fires before the handler's first one (SDM 3A 18.2.4).
 */
static bool vt_tf_lend_dr(struct vt_tf_step *t, u64 handler)
{
	u64 dr7 = vt_vmread_or0(GUEST_DR7);
	u32 p;

	for (p = 0; p < 4 && (dr7 & VT_DR7_ENABLES(p)); p++)
		;
	if (p == 4)
		return false;
	t->slot = p;
	t->saved_dr = vt_read_dr(p);
	t->saved_dr7 = dr7;
	t->lent = true;
	vt_write_dr(p, handler);
	vt_vmwrite(GUEST_DR7, (dr7 & ~VT_DR7_CONTROL(p)) | VT_DR7_LOCAL(p));
	return true;
}

static void vt_tf_return_dr(struct vt_tf_step *t)
{
	if (!t->lent)
		return;
	vt_write_dr(t->slot, t->saved_dr);
	vt_vmwrite(GUEST_DR7, t->saved_dr7);
	t->lent = false;
}

/*
 * DEBUGCTL.BTF on or off for this step, in the DEBUGCTL that VM entry loads
 * (the guest keeps reading its own value, core/control.c).
 */
static void vt_tf_set_branch(struct vt_vcpu *vcpu, struct vt_tf_step *t, bool on)
{
	u64 bits = vcpu->debugctl_owned | vcpu->debugctl_yielded;

	if (t->branch == on)
		return;
	bits = on ? bits | DEBUGCTLMSR_BTF : bits & ~DEBUGCTLMSR_BTF;
	if (!vt_set_debugctl_owned(vcpu, bits))
		t->branch = on;
}

/* RFLAGS.TF back to what the guest had before the step. */
static void vt_tf_give_back_flag(const struct vt_tf_step *t)
{
	u64 rflags = vt_vmread_or0(GUEST_RFLAGS) & ~X86_EFLAGS_TF;

	vt_vmwrite(GUEST_RFLAGS, rflags | (t->guest_tf ? X86_EFLAGS_TF : 0));
}

static void vt_tf_intercept_all(struct vt_tf_step *t)
{
	t->added = (u32)~vt_vmread_or0(EXCEPTION_BITMAP);
	vt_vmwrite(EXCEPTION_BITMAP, 0xffffffffull);
}

/* Only the bits the step set, and never those the hooks took meanwhile. */
static void vt_tf_intercept_restore(struct vt_hooks_cpu *c)
{
	u64 keep = (c->bp_intercept ? VT_BIT(X86_TRAP_BP) : 0) |
		   (c->dr_owned ? VT_BIT(X86_TRAP_DB) : 0);

	vt_vmwrite(EXCEPTION_BITMAP,
		   (vt_vmread_or0(EXCEPTION_BITMAP) & ~(u64)c->tf.added) | keep);
	c->tf.added = 0;
}

/* The step no longer needs its interception (the instruction has run, or never will). */
static void vt_tf_release(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c)
{
	vt_tf_set_branch(vcpu, &c->tf, false);
	vt_tf_return_dr(&c->tf);
	vt_tf_intercept_restore(c);
	vt_hold_events(vcpu, false);
}

/*
 * The event's handler runs as part of the step, with TF in its frame
 * (counted): the trap comes after it returns. It may sleep or spin, so it
 * takes interrupts and exceptions as usual.
 */
static void vt_tf_run_handler_in_step(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c)
{
	vt_hooks.stats.tf_unhidden++;
	vt_tf_release(vcpu, c);
	c->tf.insn = VT_TF_PLAIN;
	c->tf.unit = true;
	c->tf.tf_set = true;
	vt_vmwrite(GUEST_RFLAGS, vt_vmread_or0(GUEST_RFLAGS) | X86_EFLAGS_TF);
}

/*
 * VM entry delivers an event first: the step ends at its handler's first
 * instruction, or without a free debug register or a readable gate, after
 * the handler.
 */
static void vt_tf_step_into_handler(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c, u32 vector)
{
	u64 handler;

	vt_hooks.stats.tf_events++;
	c->tf.insn = VT_TF_EVENT;
	vt_tf_set_branch(vcpu, &c->tf, false);	/* it ends at the handler, not a branch */
	if (vt_tf_handler(vcpu, vector, &handler) && vt_tf_lend_dr(&c->tf, handler))
		return;
	vt_tf_run_handler_in_step(vcpu, c);
}

/*
 * The event VM entry will deliver: one queued for injection, or the one
 * whose delivery this exit interrupted, which the core queues again after
 * the handlers ran (core/exit.c, SDM 3C 28.2.4).
 */
static u32 vt_tf_pending_event(void)
{
	u32 queued = (u32)vt_vmread_or0(VM_ENTRY_INTR_INFO_FIELD);

	if (queued & INTR_INFO_VALID_MASK)
		return queued;
	return (u32)vt_vmread_or0(IDT_VECTORING_INFO_FIELD);
}

/*
 * Where SYSCALL or SYSRET goes (SDM Vol. 2B): IA32_LSTAR from 64-bit code,
 * IA32_CSTAR from compatibility mode, which the guest's kernel shares with
 * VMX root; RCX for SYSRET. A debug register lent there ends the step
 * before the first instruction at the target, where TF could not.
 */
static bool vt_tf_lend_at_target(const struct vt_vcpu *vcpu, struct vt_tf_step *t)
{
	bool long_mode = vt_vmread_or0(GUEST_CS_AR_BYTES) & VT_CS_AR_LONG;
	u64 target;

	if (t->insn == VT_TF_SYSRET) {
		if (!vcpu->regs)
			return false;
		target = vcpu->regs->rcx;
	} else if (vt_rdmsr_safe(long_mode ? MSR_LSTAR : MSR_CSTAR, &target)) {
		return false;
	}
	return vt_tf_lend_dr(t, target);
}

/*
 * HLT under TF would trap only once an interrupt ends the halt, and the
 * step holds interrupts off. So the step does what the CPU would: RIP
 * past the HLT (insn_len; 0 when the CPU is halted already), the CPU
 * halted, and the step ends at the stub's next poll (the preemption
 * timer counts in HLT, SDM 3C 26.5.1), as an MTF step ends right after a
 * HLT. Interrupts that came meanwhile wait for the release.
 */
static void vt_tf_halt(struct vt_tf_step *t, u32 insn_len)
{
	t->insn = VT_TF_HALTED;
	if (vt_vmread_or0(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT)
		return;
	vt_vmwrite(GUEST_RIP, vt_vmread_or0(GUEST_RIP) + insn_len);
	vt_vmwrite(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_HLT);
}

static int vt_tf_arm(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c)
{
	struct vt_tf_step *t = &c->tf;
	u64 rflags = vt_vmread_or0(GUEST_RFLAGS);
	u32 pending = vt_tf_pending_event();
	u8 vector = 0;
	u32 len = 0;
	int ret = vt_hold_events(vcpu, true);

	if (ret)
		return ret;
	vt_memset(t, 0, sizeof(*t));
	t->active = true;
	t->guest_tf = rflags & X86_EFLAGS_TF;
	vt_hooks.stats.tf_steps++;
	vt_tf_intercept_all(t);
	/*
	 * With TF set, VM entry wants a pending single-step trap under STI or
	 * MOV-SS blocking (SDM 3C 26.3.1.5). The blocking only holds
	 * interrupts off for one instruction, which the step does anyway.
	 */
	vt_vmwrite(GUEST_INTERRUPTIBILITY_INFO, vt_vmread_or0(GUEST_INTERRUPTIBILITY_INFO) &
		   ~(u64)(GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
	if (pending & INTR_INFO_VALID_MASK) {
		vt_tf_step_into_handler(vcpu, c, pending & INTR_INFO_VECTOR_MASK);
		return 0;
	}
	t->insn = vt_tf_classify(vcpu, &vector, &len);
	if (t->insn == VT_TF_HALTED ||
	    vt_vmread_or0(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT) {
		vt_tf_halt(t, len);
		return 0;
	}
	if (t->insn == VT_TF_INT_N) {
		/* Delivered by VM entry with its privilege checks, as if executed (26.5.1.1). */
		vt_vmwrite(VM_ENTRY_INTR_INFO_FIELD, vector | INTR_TYPE_SOFT_INTR | INTR_INFO_VALID_MASK);
		vt_vmwrite(VM_ENTRY_INSTRUCTION_LEN, len);
		vt_tf_step_into_handler(vcpu, c, vector);
		return 0;
	}
	if ((t->insn == VT_TF_SYSCALL || t->insn == VT_TF_SYSRET) && vt_tf_lend_at_target(vcpu, t))
		return 0;
	t->tf_set = true;
	vt_vmwrite(GUEST_RFLAGS, rflags | X86_EFLAGS_TF);
	return 0;
}

int vt_single_step_arm(struct vt_vcpu *vcpu)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	int ret;

	if (vt_mtf_usable(vcpu->hv)) {
		ret = vt_set_mtf(vcpu, true);
		if (!ret)
			vt_mtf_hold_interrupts();
		return ret;
	}
	if (!c)
		return -VT_EINVAL;
	if (c->tf.active) {
		/* One step serves the hooks, the debugger and the tracer: one instruction. */
		vt_tf_set_branch(vcpu, &c->tf, false);
		return 0;
	}
	return vt_tf_arm(vcpu, c);
}

/*
 * BTF reads back set (core/vmx_caps.c probes it by effect) and VM entry
 * loads the DEBUGCTL that holds it (SDM 3C 26.3.2.1).
 */
bool vt_single_step_has_btf(const struct vt_hv *hv)
{
	return (hv->caps.flags & VTICE_CAP_DEBUGCTL_BTF) &&
	       (hv->ctls.entry & VM_ENTRY_LOAD_DEBUG_CONTROLS);
}

/* The CPU halts (or stays halted) at its next entry, with no event to deliver. */
static bool vt_tf_would_halt(const struct vt_vcpu *vcpu)
{
	u8 vector;
	u32 len;

	if (vt_tf_pending_event() & INTR_INFO_VALID_MASK)
		return false;
	return vt_vmread_or0(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT ||
	       vt_tf_classify(vcpu, &vector, &len) == VT_TF_HALTED;
}

int vt_single_step_arm_trace(struct vt_vcpu *vcpu, bool branch)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	struct vt_tf_step *t = c ? &c->tf : NULL;
	int ret;

	if (!t)
		return -VT_EINVAL;
	if (t->active)
		return 0;	/* joins the step armed: ours, or someone's plain one */
	if (vt_tf_would_halt(vcpu))
		return -VT_EAGAIN;
	ret = vt_tf_arm(vcpu, c);
	if (ret || !branch || !vt_single_step_has_btf(vcpu->hv))
		return ret;
	if (t->insn == VT_TF_PLAIN && t->tf_set &&
	    vt_btf_block_safe(vcpu, vt_hooks.own_mem, vt_vmread_or0(GUEST_RIP)))
		vt_tf_set_branch(vcpu, t, true);
	return 0;
}

bool vt_single_step_was_branch(const struct vt_vcpu *vcpu)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);

	return c && c->tf.ended_branch;
}

void vt_single_step_disarm(struct vt_vcpu *vcpu)
{
	if (vt_mtf_usable(vcpu->hv))
		vt_set_mtf(vcpu, false);
}

/* This CPU's hooks state when a TF step is armed on it, else NULL. */
static struct vt_hooks_cpu *vt_tf_armed(const struct vt_vcpu *vcpu)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);

	return c && c->tf.active ? c : NULL;
}

/* TF back to the guest's: after the step, in the copies it made too. */
static void vt_tf_finish(struct vt_vcpu *vcpu, struct vt_exit *exit, struct vt_hooks_cpu *c)
{
	struct vt_tf_step *t = &c->tf;
	u64 rsp = vt_vmread_or0(GUEST_RSP);
	u8 flags_hi;

	/* A handler's RFLAGS and loaded ones are the CPU's; SYSCALL's are masked by the guest. */
	if (t->insn == VT_TF_PLAIN || t->insn == VT_TF_PUSHF)
		vt_tf_give_back_flag(t);
	if (!t->guest_tf && t->tf_set && t->insn == VT_TF_SYSCALL)
		exit->regs->r11 &= ~X86_EFLAGS_TF;
	/* TF is bit 0 of the pushed image's second byte, whatever its width. */
	if (!t->guest_tf && t->insn == VT_TF_PUSHF &&
	    vt_own_read(vcpu, rsp + 1, &flags_hi, 1) == 1) {
		flags_hi &= ~(u8)(X86_EFLAGS_TF >> 8);
		vt_own_write(vcpu, rsp + 1, &flags_hi, 1);
	}
	t->ended_branch = t->branch;
	vt_tf_release(vcpu, c);
	t->active = false;
}

enum vt_tf_event vt_single_step_on_debug(struct vt_vcpu *vcpu, struct vt_exit *exit,
					 u64 *other_dr6)
{
	struct vt_hooks_cpu *c = vt_tf_armed(vcpu);
	struct vt_tf_step *t = c ? &c->tf : NULL;

	*other_dr6 = exit->qual & DR_TRAP_BITS;
	if (!t)
		return VT_TF_NOT_MINE;
	if (t->lent && (exit->qual & VT_BIT(t->slot)))
		*other_dr6 &= ~VT_BIT(t->slot);
	else if (!(exit->qual & DR6_BS))
		return VT_TF_NOT_MINE;
	vt_tf_finish(vcpu, exit, c);
	return VT_TF_DONE;
}

enum vt_tf_event vt_single_step_on_exception(struct vt_vcpu *vcpu, struct vt_exit *exit,
					     u32 intr_info)
{
	struct vt_hooks_cpu *c = vt_tf_armed(vcpu);
	struct vt_tf_step *t = c ? &c->tf : NULL;

	if (!t || t->unit)
		return VT_TF_NOT_MINE;
	vt_tf_give_back_flag(t);
	/*
	 * Delivering an event raised this one: the CPU must combine the two
	 * (a double fault, SDM 3A 6.15). The core delivers the first again
	 * (core/exit.c) with nothing intercepted, and the CPU does it.
	 */
	if (vt_vmread_or0(IDT_VECTORING_INFO_FIELD) & INTR_INFO_VALID_MASK) {
		vt_hooks.stats.tf_events++;
		vt_tf_run_handler_in_step(vcpu, c);
		return VT_TF_REFLECTED;
	}
	vt_reflect_event(exit, intr_info);
	vt_tf_return_dr(t);
	vt_tf_step_into_handler(vcpu, c, intr_info & INTR_INFO_VECTOR_MASK);
	return VT_TF_REFLECTED;
}

bool vt_single_step_on_poll(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	struct vt_hooks_cpu *c = vt_tf_armed(vcpu);

	if (!c || c->tf.insn != VT_TF_HALTED)
		return false;
	vt_tf_finish(vcpu, exit, c);
	return true;
}

bool vt_single_step_suspend(struct vt_vcpu *vcpu)
{
	struct vt_hooks_cpu *c = vt_tf_armed(vcpu);
	struct vt_tf_step *t = c ? &c->tf : NULL;

	if (!t)
		return false;
	/* Nothing ran yet: an event we queued stays queued, and the re-arm steps into it. */
	if (t->tf_set)
		vt_tf_give_back_flag(t);
	vt_tf_release(vcpu, c);
	t->active = false;
	return true;
}
