// SPDX-License-Identifier: GPL-2.0
/*
 * The memory a stepped instruction may write (step_windows.h).
 */
#include "step_windows.h"

/* Opens a window at addr unless one is open there or its bytes are not all mapped: whether it did. */
static bool vt_step_window_add(struct vt_step_windows *sw, u64 addr, const struct vt_vcpu *vcpu, vt_own_mem_fn mem)
{
	struct vt_step_window *w;
	u32 i;

	if (sw->n == VT_STEP_WINDOWS)
		return false;
	for (i = 0; i < sw->n; i++)
		if (sw->w[i].addr == addr)
			return false;
	w = &sw->w[sw->n];
	if (mem(vcpu, addr, &w->before, VT_STEP_WINDOW_BYTES, false) != VT_STEP_WINDOW_BYTES)
		return false;
	w->addr = addr;
	sw->n++;
	return true;
}

void vt_step_windows_open(struct vt_step_windows *sw, const struct vt_insn *insn, const struct vt_step_regs *regs,
			  const struct vt_vcpu *vcpu, vt_own_mem_fn mem)
{
	sw->n = 0;
	sw->operand = insn->mem.present && insn->mem.exact &&
		      vt_step_window_add(sw, vt_insn_mem_address(&insn->mem, regs->gpr, regs->rip + insn->len, regs->fs_base,
							   regs->gs_base), vcpu, mem);
	vt_step_window_add(sw, regs->gpr[VT_INSN_REG_RSP] - VT_STEP_WINDOW_BYTES, vcpu, mem);
	vt_step_window_add(sw, regs->gpr[VT_INSN_REG_RDI], vcpu, mem);
}

u32 vt_step_windows_close(const struct vt_step_windows *sw, const struct vt_vcpu *vcpu, vt_own_mem_fn mem,
			  vt_step_changed_fn changed, void *ctx)
{
	u64 after;
	u32 i, n = 0;

	for (i = 0; i < sw->n; i++) {
		if (mem(vcpu, sw->w[i].addr, &after, VT_STEP_WINDOW_BYTES, false) != VT_STEP_WINDOW_BYTES ||
		    after == sw->w[i].before)
			continue;	/* unmapped since (a page freed under it), or unchanged */
		changed(ctx, sw->w[i].addr, sw->w[i].before, after);
		n++;
	}
	return n;
}
