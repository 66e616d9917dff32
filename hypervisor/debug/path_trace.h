/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The syscall-path tracer (local mode, docs/tracing.md): the next calls of
 * one syscall by a task that passes the syscall trap's filter, traced from
 * the SYSCALL to the return by the branch tracer (tracer.h) into the
 * per-CPU rings. The module arms it with VTICE_VMCALL_PATH_TRACE, then arms
 * the syscall trap quietly on every CPU (core/syscall_trap.h), which hands
 * it each SYSCALL and SYSRET.
 *
 * What one call leaves in the rings (include/uapi/vtice/ioctl.h): the
 * SYSCALL_ENTER group; a BRANCH from the SYSCALL to the kernel's entry;
 * the branches the task ran in the kernel, on whichever CPUs it ran; for a
 * SYSRET, its BRANCH and the SYSCALL_EXIT group; then TRACE_STOP.
 *
 * The switch trigger: a hidden breakpoint the module plants (when the
 * console names __switch_to) on the kernel's write of the CPU's
 * current-task pointer (switch_trigger.h), which root then does itself.
 * With it, a traced call's CPUs step only while its task is current on
 * them: any CPU that switches to the task exits there and steps on from
 * the next instruction, the first one the tracer's task filter would
 * record. Without it, every CPU is stepped and the filter drops what other
 * tasks run (docs/tracing.md, "The switch trigger").
 */
#ifndef VT_DEBUG_PATH_TRACE_H
#define VT_DEBUG_PATH_TRACE_H

#include "tracer.h"
#include "../core/syscall_trap.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vt_hv;
struct vt_vcpu;
struct vt_exit;

/* Without a stub: pages that may hold probes at once (probe_points.h). */
#define VT_PATH_PROBE_SHADOWS	64

/*
 * At load, after the stub (if any) is set up: initializes the tracer for
 * rings only unless the stub already did, and registers the path tracer's
 * callbacks when no debugger registered its own (the stub's call the
 * functions below themselves). 0 without MTF too: the VMCALL then answers
 * ENOSYS.
 */
int vt_path_init(struct vt_hv *hv, const struct vt_tracer_config *cfg);
int vt_path_shield(void);
void vt_path_fini(void);

/* VMX root. The callbacks a debugger's own table forwards to. */
void vt_path_on_syscall(struct vt_vcpu *vcpu, struct vt_exit *exit, enum vt_sys_edge edge,
			u64 from_rip);
/* VTICE_VMCALL_PATH_TRACE: true when func was it (RAX, RDX and RIP set). */
bool vt_path_on_vmcall(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 func);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_PATH_TRACE_H */
