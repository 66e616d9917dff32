/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory a stepped instruction may write, for the recorder in root
 * (tracer_record.c, docs/replay.md): before the step, up to three 8-byte
 * windows are read as they are (the explicit memory operand's address,
 * the slot under RSP that PUSH and CALL write, and RDI, where STOS and
 * MOVS write); after it, the same windows again, and those whose bytes
 * changed are reported with both: whole 8-byte windows, not the bytes the
 * instruction meant to write (a store wider than 8 is seen in part, and a
 * store of the bytes already there not at all); the console decodes the
 * instructions and says which bytes were (replay/root_accesses.cpp).
 * Portable C with no state, so it runs in VMX root and in the unit tests
 * alike.
 */
#ifndef VT_DEBUG_STEP_WINDOWS_H
#define VT_DEBUG_STEP_WINDOWS_H

#include "hooks.h"
#include "insn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VT_STEP_WINDOWS		3
#define VT_STEP_WINDOW_BYTES	8

struct vt_step_window {
	u64 addr;
	u64 before;	/* its 8 bytes, little-endian */
};

struct vt_step_windows {
	u32 n;		/* windows read whole before the step */
	bool operand;	/* w[0] is the explicit memory operand's */
	struct vt_step_window w[VT_STEP_WINDOWS];
};

/* The registers a step's windows are worked out from, as they are before it. */
struct vt_step_regs {
	u64 gpr[16];	/* RAX..R15, RSP included (insn.h's numbers) */
	u64 rip;	/* the instruction about to run */
	u64 fs_base, gs_base;
};

/*
 * Before insn (decoded at regs->rip) runs: the windows it may write, each
 * read through mem as the guest sees it. A window that is not mapped
 * whole, or that repeats one already open, is left out; an operand whose
 * address cannot be worked out exactly (insn.h) is too.
 */
void vt_step_windows_open(struct vt_step_windows *sw, const struct vt_insn *insn, const struct vt_step_regs *regs,
			  const struct vt_vcpu *vcpu, vt_own_mem_fn mem);

/* A window whose bytes the step changed: its address, its 8 bytes before and after (little-endian). */
typedef void (*vt_step_changed_fn)(void *ctx, u64 addr, u64 before, u64 after);

/*
 * After the step: each open window read again, and changed() called for
 * those that differ, in the order they were opened. The count of them.
 */
u32 vt_step_windows_close(const struct vt_step_windows *sw, const struct vt_vcpu *vcpu, vt_own_mem_fn mem,
			  vt_step_changed_fn changed, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_STEP_WINDOWS_H */
