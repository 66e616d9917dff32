/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the path tracer's switch trigger goes (path_trace.h): on the one
 * instruction in __switch_to that makes the next task current,
 * `this_cpu_write(current_task, next_p)`. The kernel compiles it to a
 * 64-bit MOV from a register to a GS-relative memory operand (SDM Vol. 2B
 * MOV: REX.W 89 /r with a 65 prefix), addressed either as disp32 with
 * neither base nor index (SIB 25H) or RIP-relative: 6.1's and 6.12's
 * Debian builds use RIP-relative, with a displacement that wraps to the
 * per-CPU section's zero-based offset. Which store it is, is told by its
 * effective address, never by its place: GS base plus the operand's
 * address must be this CPU's current-task pointer.
 *
 * The trigger's hit emulates that store in VMX root (ept_bp.c): a hidden
 * breakpoint's usual way on, one step of the original instruction on the
 * page's original frame, opens a window in which another CPU runs the
 * page without the breakpoint (the EPT is shared), and a switch there
 * would go unseen.
 *
 * Portable C without state: the module's kernel side, VMX root, the tests.
 */
#ifndef VT_DEBUG_SWITCH_TRIGGER_H
#define VT_DEBUG_SWITCH_TRIGGER_H

#include "../core/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * text[0..size) is the function at text_va. gs_base is the kernel's GS
 * base on this CPU and current_ptr the address of its current-task
 * pointer. 0 and *store set to that store's address when exactly one
 * instruction stores a register there; -VT_ENOENT when none does,
 * -VT_EINVAL when the text does not decode from its start or more than
 * one does.
 */
int vt_switch_trigger_find(const u8 *text, u32 size, u64 text_va, u64 gs_base, u64 current_ptr,
			   u64 *store);

/* What a `mov r64, %gs:m` stores: where (GS-relative) and from which register. */
struct vt_gs_store {
	u64 gs_offset;
	u32 reg;		/* 0-15: RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8-R15 */
};

/*
 * The store a `mov r64, %gs:m` at ip (len bytes, decoded) makes, or false
 * when the instruction is anything else.
 */
bool vt_insn_gs_store(const u8 *b, u32 len, u64 ip, struct vt_gs_store *out);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_SWITCH_TRIGGER_H */
