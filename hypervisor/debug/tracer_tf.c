// SPDX-License-Identifier: GPL-2.0
/*
 * TF steps for the branch tracer (tracer.h, "Branch steps" in tracer.c):
 * what a step that ended tells, and the LBR stack that names branches
 * exactly where the CPU has one. The steps themselves are single_step.c's.
 */
#include "tracer_priv.h"
#include "btf_block.h"
#include "single_step.h"
#include "../core/exit.h"
#include "../core/hv.h"

/*
 * A CPU that ignores BTF traps after one instruction: the step's first,
 * which did not branch, and RIP is right after it. From then on its steps
 * are plain ones (the CPU's own say beats the probe at load).
 */
static bool vt_trace_btf_ignored(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u64 to)
{
	u8 bytes[VT_INSN_BYTES] = { 0 };
	struct vt_insn insn;
	int n = vt_tracer.mem(vcpu, c->entry_rip, bytes, sizeof(bytes), false);

	if (n <= 0 || vt_insn_decode(bytes, (u32)n, &insn) || to != c->entry_rip + insn.len ||
	    (insn.kind != VT_INSN_OTHER && insn.kind != VT_INSN_JCC))
		return false;
	c->no_btf = true;
	c->btf_ignored++;
	return true;
}

/*
 * A branch step ran straight-line code from c->entry_rip and branched to
 * `to`: the instructions it ran (1 where the code could not be read). The
 * LBR stack's newest entry, where it ends at `to`, names the branch
 * exactly; the code alone cannot tell two Jcc to the same target apart.
 */
static u32 vt_trace_branch_step(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u64 to, u8 cpl,
				const struct vtice_lbr_entry *newest)
{
	u32 flags = VTICE_BRANCH_FROM_BTF, ran = 1;
	u64 from = c->entry_rip;

	c->branch_steps++;
	if (!c->first_ip)
		c->first_ip = c->entry_rip;
	if (vt_trace_btf_ignored(c, vcpu, to))
		return 1;
	c->last_ip = to;
	if (vt_btf_block_branch(vcpu, vt_tracer.mem, c->entry_rip, to, &from, &ran))
		c->undecoded++;
	if (newest && newest->to == to) {
		from = newest->from;
		flags |= VTICE_BRANCH_FROM_LBR;
	}
	if (!c->entry_cpl || !cpl)	/* user code: stepped, not recorded */
		vt_trace_push(c, vcpu, from, to, flags);
	return ran;
}

static bool vt_trace_is_user(u64 address)
{
	return !(address >> 63);
}

/*
 * More than one branch in one TF step: a handler ran inside it (no debug
 * register was free to end the step at its first instruction, single_step.c).
 * The LBR stack has them all; each is judged as a step's would be. A stack
 * that went round lost the oldest: that is recorded as a loss.
 */
static void vt_trace_lbr_run(struct vt_trace_cpu *c, struct vt_vcpu *vcpu,
			     const struct vtice_lbr_entry *br, u32 n, bool wrapped)
{
	u8 bytes[VT_INSN_BYTES] = { 0 };
	struct vt_insn insn;
	u32 i, flags;
	int len;

	if (wrapped)
		vt_trace_store(c, vcpu, VTICE_REC_LOST, 0, 0, 0);
	for (i = 0; i < n; i++) {
		if (vt_trace_is_user(br[i].from) && vt_trace_is_user(br[i].to))
			continue;
		flags = VTICE_BRANCH_FROM_LBR;
		len = vt_tracer.mem(vcpu, br[i].from, bytes, sizeof(bytes), false);
		if (len > 0 && !vt_insn_decode(bytes, (u32)len, &insn) &&
		    !vt_trace_branched(c, &insn, br[i].from, br[i].to)) {
			flags |= VTICE_BRANCH_ASYNC;
			c->async++;
		}
		vt_trace_push(c, vcpu, br[i].from, br[i].to, flags);
		c->lbr_branches++;
	}
	c->last_ip = br[n - 1].to;
}

/* The LBR entries since the last step's end, where the trace reads the stack. */
u32 vt_trace_lbr_since(struct vt_trace_cpu *c, struct vt_vcpu *vcpu,
			      struct vtice_lbr_entry *br, bool *wrapped)
{
	*wrapped = false;
	if (!c->lbr || !(vcpu->debugctl_owned & DEBUGCTLMSR_LBR))
		return 0;	/* the kernel took LBR for itself (perf): its filter, not ours */
	return vt_lbr_since(&vt_tracer.lbr, &c->mark, br, wrapped);
}

/* A TF step ended at `to`: a branch step, a run the LBR saw, or one instruction. */
u32 vt_trace_tf_step(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u64 to, u8 cpl,
			    const struct vtice_lbr_entry *br, u32 n, bool wrapped)
{
	if (vt_single_step_was_branch(vcpu))
		return vt_trace_branch_step(c, vcpu, to, cpl, n == 1 && !wrapped ? &br[0] : NULL);
	if (n > 1 || wrapped)
		vt_trace_lbr_run(c, vcpu, br, n, wrapped);
	else
		vt_trace_step(c, vcpu, to, cpl);
	return 1;
}

/*
 * TF steps read the LBR stack where the CPU has one the kernel is not
 * using itself (perf): it is turned on in the guest's DEBUGCTL, hidden
 * from the kernel (core/exit_msr.c), unless the stub keeps it on anyway
 * (lbr.h), and given back when the trace ends.
 */
void vt_trace_use_lbr(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, bool on)
{
	u64 owned = vcpu->debugctl_owned | vcpu->debugctl_yielded;

	if (!on) {
		if (c->owns_lbr)
			vt_set_debugctl_owned(vcpu, owned & ~DEBUGCTLMSR_LBR);
		c->lbr = c->owns_lbr = false;
		return;
	}
	if (vt_tracer.lbr.status != VTICE_LBR_OK || !vt_tracer.lbr.nr ||
	    (vcpu->debugctl_yielded & DEBUGCTLMSR_LBR))
		return;
	if (!(vcpu->debugctl_owned & DEBUGCTLMSR_LBR)) {
		if (vt_set_debugctl_owned(vcpu, owned | DEBUGCTLMSR_LBR))
			return;
		c->owns_lbr = true;
	}
	c->lbr = true;
	vt_lbr_take_mark(&vt_tracer.lbr, &c->mark);
}
