/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Branch steps: with IA32_DEBUGCTL.BTF and RFLAGS.TF both set, the
 * single-step #DB comes after the next taken branch instead of the next
 * instruction (SDM Vol. 3B 18.4.3). Such a step runs straight-line code up
 * to that branch, and two questions about that code are answered here:
 *
 * - Before the step: may it run at all? Every instruction from RIP up to
 *   and including the first one that always branches must decode and be
 *   no TF hazard (insn.h): one that reads RFLAGS would see our TF, one
 *   that loads it would end the step without a trap. Otherwise the caller
 *   steps one instruction at a time until it is past the hazard.
 * - After it: which instruction took the branch to where the CPU is now?
 *   The first, from where the step began, that could have gone there:
 *   a Jcc whose target it is, or the first instruction that always
 *   branches. A Jcc that was not taken and one further on that was, both
 *   to the same target, cannot be told apart by the code alone: the first
 *   is named (where the CPU has LBR the tracer asks it instead).
 */
#ifndef VT_DEBUG_BTF_BLOCK_H
#define VT_DEBUG_BTF_BLOCK_H

#include "hooks.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VT_BTF_BLOCK_MAX	64	/* instructions a branch step may run */

/* True when a branch step may start at rip (see above). */
bool vt_btf_block_safe(const struct vt_vcpu *vcpu, vt_own_mem_fn mem, u64 rip);
/*
 * The branch a step begun at start took to reach `to`: 0, with *from and
 * the instructions the step ran (*insns, the branch included), or
 * -VT_EFAULT (code unreadable) / -VT_EINVAL (undecodable, or no branch
 * within VT_BTF_BLOCK_MAX instructions).
 */
int vt_btf_block_branch(const struct vt_vcpu *vcpu, vt_own_mem_fn mem, u64 start, u64 to, u64 *from,
			u32 *insns);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_BTF_BLOCK_H */
