// SPDX-License-Identifier: GPL-2.0
/*
 * A recorded trace (records.h, VTICE_REC_STEP): what each MTF step of the
 * traced task changed, for the console to replay. Before the step (at
 * the VM entry that arms it) root keeps the registers, decodes the
 * instruction at RIP and reads the memory it may write (step_windows.h);
 * after it (the MTF exit) it gives the step's RIP, the registers that
 * differ from before, the explicit operand as it read it, and the windows
 * the step changed. After a gap (the trace's start, another task's steps)
 * the registers as the step found them come first. An exit in the middle
 * of a step (CPUID, an EPT violation) and its VM entry leave the step
 * open: its "before" is the first entry's.
 */
#include "tracer_priv.h"
#include "../core/exit.h"
#include "../core/hv.h"

/* The registers a step may change, in VTICE_STEP_REG_* order. */
static void vt_record_regs_now(struct vt_vcpu *vcpu, u64 *regs)
{
	const struct vt_guest_regs *g = vcpu->regs;

	regs[VTICE_STEP_REG_RAX] = g->rax;
	regs[1] = g->rcx;
	regs[2] = g->rdx;
	regs[3] = g->rbx;
	regs[VTICE_STEP_REG_RSP] = vt_vmread_or0(GUEST_RSP);	/* the VMCS's, not the exit frame's */
	regs[5] = g->rbp;
	regs[6] = g->rsi;
	regs[7] = g->rdi;
	vt_memcpy(&regs[8], &g->r8, 8 * sizeof(u64));	/* r8..r15 in both layouts */
	regs[VTICE_STEP_REG_RFLAGS] = vt_vmread_or0(GUEST_RFLAGS);
	regs[VTICE_STEP_REG_FS_BASE] = vt_vmread_or0(GUEST_FS_BASE);
	regs[VTICE_STEP_REG_GS_BASE] = vt_vmread_or0(GUEST_GS_BASE);
}

/* Registers from `now` as STEP_REGS records, two to a record: those that differ from `was`, or all. */
static void vt_record_regs(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, const u64 *now, const u64 *was)
{
	u64 val[2];
	u32 i, ids = 0, n = 0;

	for (i = 0; i < VTICE_STEP_REGS; i++) {
		if (was && now[i] == was[i])
			continue;
		ids |= i << (8 * n);
		val[n++] = now[i];
		if (n == 2) {
			vt_trace_store(c, vcpu, VTICE_REC_STEP_REGS, ids | 2u << VTICE_STEP_REG_COUNT_SHIFT,
				       val[0], val[1]);
			ids = n = 0;
		}
	}
	if (n)
		vt_trace_store(c, vcpu, VTICE_REC_STEP_REGS, ids | 1u << VTICE_STEP_REG_COUNT_SHIFT, val[0], 0);
}

void vt_trace_record_open(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	struct vt_step_regs regs;
	u8 bytes[VT_INSN_BYTES];
	int n;

	if (c->rec_open)
		return;
	c->rec_open = true;
	c->rec_rip = vt_vmread_or0(GUEST_RIP);
	vt_record_regs_now(vcpu, c->rec_regs);
	vt_memcpy(regs.gpr, c->rec_regs, sizeof(regs.gpr));
	regs.rip = c->rec_rip;
	regs.fs_base = c->rec_regs[VTICE_STEP_REG_FS_BASE];
	regs.gs_base = c->rec_regs[VTICE_STEP_REG_GS_BASE];
	n = vt_tracer.mem(vcpu, c->rec_rip, bytes, sizeof(bytes), false);
	c->rec_insn_ok = n > 0 && !vt_insn_decode(bytes, (u32)n, &c->rec_insn);
	if (!c->rec_insn_ok)
		c->rec_insn.mem.present = false;	/* still the stack and RDI windows */
	vt_step_windows_open(&c->windows, &c->rec_insn, &regs, vcpu, vt_tracer.mem);
}

struct vt_record_mem {
	struct vt_trace_cpu *c;
	struct vt_vcpu *vcpu;
	u64 changed[VT_STEP_WINDOWS];	/* the windows given as written */
	u32 nr_changed;
};

static bool vt_record_was_changed(const struct vt_record_mem *m, u64 addr)
{
	u32 i;

	for (i = 0; i < m->nr_changed; i++)
		if (m->changed[i] == addr)
			return true;
	return false;
}

static void vt_record_write(struct vt_record_mem *m, u64 addr, u64 before, u64 after)
{
	vt_trace_store(m->c, m->vcpu, VTICE_REC_STEP_MEM, VTICE_STEP_MEM_BEFORE, addr, before);
	vt_trace_store(m->c, m->vcpu, VTICE_REC_STEP_MEM, VTICE_STEP_MEM_AFTER, addr, after);
	if (m->nr_changed < VT_STEP_WINDOWS)
		m->changed[m->nr_changed++] = addr;
}

static void vt_record_changed(void *ctx, u64 addr, u64 before, u64 after)
{
	vt_record_write(ctx, addr, before, after);
}

/* The window at addr, which the step wrote without changing a byte, given as written (before = after). */
static void vt_record_unchanged_write(struct vt_record_mem *m, u64 addr)
{
	const struct vt_step_windows *sw = &m->c->windows;
	u32 i;

	if (vt_record_was_changed(m, addr))
		return;
	for (i = 0; i < sw->n; i++)
		if (sw->w[i].addr == addr)
			vt_record_write(m, addr, sw->w[i].before, sw->w[i].before);
}

/*
 * A PUSH or CALL that stored what the slot held already (the same return
 * address, a loop's second call) changed no byte, yet the slot is the
 * stack's now: given as written, so a replay's unwinder knows it.
 */
static void vt_record_pushed_same(struct vt_record_mem *m, u64 rsp_before)
{
	u64 slot = rsp_before - VT_STEP_WINDOW_BYTES;

	if (vt_vmread_or0(GUEST_RSP) == slot)
		vt_record_unchanged_write(m, slot);
}

/*
 * A string store (MOVS, STOS) that wrote what [RDI] held already (a REP
 * STOS clearing memory that was zero) changed no byte of the RDI window,
 * yet the instruction wrote there: given as written, so a replay's
 * last-write and watchpoints find it (the console cuts the window to the
 * element's size).
 */
static void vt_record_stored_same(struct vt_record_mem *m)
{
	const struct vt_trace_cpu *c = m->c;

	if (c->rec_insn_ok && c->rec_insn.stores_rdi)
		vt_record_unchanged_write(m, c->rec_regs[VT_INSN_REG_RDI]);
}

/*
 * An event delivered in the step pushed its frame at the new RSP (SDM Vol.
 * 3A 6.14.2: SS, RSP, RFLAGS, CS, RIP, and an error code for some), on
 * the stack or an IST stack, where no window of the step looked.
 */
static void vt_record_frame(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	u64 rsp = vt_vmread_or0(GUEST_RSP), word;
	u32 off;

	for (off = 0; off < VTICE_STEP_FRAME_BYTES; off += sizeof(word))
		if (vt_tracer.mem(vcpu, rsp + off, &word, sizeof(word), false) == (int)sizeof(word))
			vt_trace_store(c, vcpu, VTICE_REC_STEP_MEM, VTICE_STEP_MEM_FRAME, rsp + off, word);
}

/* The step that ran from c->rec_rip ended at `to`, in an IDT handler if `delivered`: its group of records. */
void vt_trace_record_close(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u64 to, bool delivered)
{
	struct vt_record_mem m = { .c = c, .vcpu = vcpu };
	const struct vt_step_window *operand = &c->windows.w[0];
	u64 now[VTICE_STEP_REGS];

	if (!c->rec_open)
		return;
	c->rec_open = false;
	if (!c->rec_have_regs)
		vt_record_regs(c, vcpu, c->rec_regs, NULL);	/* after a gap: as the step found them */
	c->rec_have_regs = true;
	vt_trace_store(c, vcpu, VTICE_REC_STEP, 0, c->rec_rip, to);
	vt_record_regs_now(vcpu, now);
	vt_record_regs(c, vcpu, now, c->rec_regs);
	vt_step_windows_close(&c->windows, vcpu, vt_tracer.mem, vt_record_changed, &m);
	if (c->windows.operand && !vt_record_was_changed(&m, operand->addr))
		vt_trace_store(c, vcpu, VTICE_REC_STEP_MEM, VTICE_STEP_MEM_READ, operand->addr, operand->before);
	vt_record_pushed_same(&m, c->rec_regs[VTICE_STEP_REG_RSP]);
	if (delivered)
		vt_record_frame(c, vcpu);
	else	/* (a step that ended in a handler may not have run its instruction) */
		vt_record_stored_same(&m);
}

/* A step not to record (user code, another task): a gap the next step's registers bridge. */
void vt_trace_record_drop(struct vt_trace_cpu *c)
{
	c->rec_open = false;
	c->rec_have_regs = false;
}
