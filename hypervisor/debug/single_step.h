/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One guest instruction, then an exit: what a debugger step and the hooks'
 * "complete this access with the protection lifted" both need. With the
 * monitor trap flag where the CPU has it (SDM Vol. 3C 26.5.2); otherwise,
 * or with the module's step_tf parameter, with RFLAGS.TF and the #DB
 * intercepted (SDM 3A 18.3.1.4), hidden from the guest (single_step.c).
 * Either way the end of the step reaches the stub's MTF path.
 */
#ifndef VT_DEBUG_SINGLE_STEP_H
#define VT_DEBUG_SINGLE_STEP_H

#include "../core/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vt_hv;
struct vt_vcpu;
struct vt_exit;

/* At load: step with TF even where MTF exists (to exercise the fallback). */
void vt_single_step_prefer_tf(bool on);
bool vt_single_step_uses_tf(const struct vt_hv *hv);
bool vt_single_step_supported(const struct vt_hv *hv);

/* VMX root, on the vCPU's own CPU, before it re-enters the guest. 0 or -VT_E*. */
int vt_single_step_arm(struct vt_vcpu *vcpu);
/*
 * The tracer's step: always with TF (the tracer's TF mode, tracer.h), and
 * with `branch` a branch step where the CPU honours DEBUGCTL.BTF and the
 * code allows it (btf_block.h). Joins a step already armed. -VT_EAGAIN:
 * the CPU halts at its next entry with nothing to deliver, and a TF step
 * would wait for an interrupt it holds off; nothing is armed.
 */
int vt_single_step_arm_trace(struct vt_vcpu *vcpu, bool branch);
/* Branch steps are possible: the CPU honours DEBUGCTL.BTF and entry loads DEBUGCTL. */
bool vt_single_step_has_btf(const struct vt_hv *hv);
/* The step that ended last on this CPU ran as a branch step to its end. */
bool vt_single_step_was_branch(const struct vt_vcpu *vcpu);
/* While on, every step is a TF step, MTF or not (the tracer steps with TF). */
void vt_single_step_trace_tf(bool on);
/* The step's end was handled (MTF exit or TF's #DB): MTF off; TF is already undone. */
void vt_single_step_disarm(struct vt_vcpu *vcpu);
/*
 * The CPU parks in a stop with a TF step armed: undo it so the debugger
 * sees the guest's own RFLAGS. True when it was armed; the stop re-arms it
 * when it releases the CPU (MTF stays armed in the VMCS meanwhile: false).
 */
bool vt_single_step_suspend(struct vt_vcpu *vcpu);

enum vt_tf_event {
	VT_TF_NOT_MINE,		/* no TF step on this CPU, or not its exception */
	VT_TF_REFLECTED,	/* the guest's own event, delivered with a clean frame */
	VT_TF_DONE,		/* the step ended: treat it as the MTF exit */
};
/*
 * An exception exit while a TF step is armed. A #DB is the step's end when
 * it carries BS or hits the debug register lent for a handler's first
 * instruction; *other_dr6 gets any B0-B3 bits it also carries.
 */
enum vt_tf_event vt_single_step_on_debug(struct vt_vcpu *vcpu, struct vt_exit *exit,
					 u64 *other_dr6);
/* The stub's poll (preemption timer): true when it ends a step over HLT. */
bool vt_single_step_on_poll(struct vt_vcpu *vcpu, struct vt_exit *exit);
/* Any other exception during the step: the guest's, delivered without TF. */
enum vt_tf_event vt_single_step_on_exception(struct vt_vcpu *vcpu, struct vt_exit *exit,
					     u32 intr_info);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_SINGLE_STEP_H */
