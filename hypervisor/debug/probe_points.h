/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probes at kernel addresses for `vtice probe` (docs/probes.md): hidden
 * breakpoints of their own kind (ept_bp.c) whose hits write a PROBE_HIT
 * group to the CPU's ring (records.h) and let the CPU go on; and watch
 * probes, EPT-watched ranges of their own owner (ept_watch.c) whose
 * accesses are recorded the same way once they completed. Armed from
 * the module's kernel side with VTICE_VMCALL_PROBES (vmcall.h), while the
 * other CPUs run: the order that keeps an int3 from ever reaching the
 * kernel is INTERCEPT on, a VM entry on every CPU (each then takes #BP
 * exits), ADD, and an INVEPT on every CPU; CLEAR, an INVEPT on every
 * CPU, then INTERCEPT off.
 */
#ifndef VT_DEBUG_PROBE_POINTS_H
#define VT_DEBUG_PROBE_POINTS_H

#include "../core/types.h"
#include "hooks.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vt_vcpu;
struct vt_exit;

/* VTICE_VMCALL_PROBES: true when func was it (RAX, RDX and RIP set). */
bool vt_probe_on_vmcall(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 func);
/* A probe at rip fired on this CPU (VMX root, the hooks' lock held): record it. */
void vt_probe_on_hit(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 rip);
/*
 * A watch probe's range was accessed (step.c, the hooks' lock held): ip
 * the instruction, now completed, addr the watched byte, access
 * VTICE_PROBE_HIT_READ/WRITE (records.h). Recorded as a hit.
 */
void vt_probe_on_watch(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 ip, u64 addr, u32 access);
/* An int3 at rip may come from a probe's execute view cached after its removal. */
bool vt_probe_recent(u64 rip);
/*
 * Remember gva before its breakpoint exists (a probe's, or the switch
 * trigger's), so no stale int3 can precede it; false when the list is full.
 */
bool vt_probe_remember(u64 gva);
/* #BP exits on every CPU for this holder; the list forgets when none holds. */
void vt_probe_intercept(enum vt_intercept_holder holder, bool on);
/*
 * The debugger's probes, through the stub (rsp_probes.c), every CPU
 * parked: op is a VTICE_VMCALL_PROBE_* with its R8-R10, gpas included
 * (*out: RDX's answer, e.g. PROBE_COUNT's; out may be NULL)
 * (the caller walks the page tables). No INVEPT round is needed: each CPU
 * syncs its #BP intercept and flushes its views at its next VM entry
 * (hooks.c), before it runs a guest instruction. 0 or a negative errno;
 * -VT_EBUSY while the kernel side owns the probes, as the kernel side gets
 * while the stub does.
 */
int vt_probe_stub_op(u32 op, u64 a, u64 b, u64 c, u64 *out);
/* Detach: the stub's probes go with its debugger; the kernel side's stay. */
void vt_probe_stub_release(void);
/* Times a module's going removed the probes (PROBE_LEAVE), since load. */
u64 vt_probe_removed(void);
/*
 * Hits recorded since load, by whichever owner; with passed_over, those
 * the filter or a KEEP chose not to record.
 */
u64 vt_probe_hits(bool passed_over);
/* Hide this file's state from the guest; at load. */
int vt_probe_shield(void);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_PROBE_POINTS_H */
