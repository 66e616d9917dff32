/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stopping the whole machine for the debugger. The CPU that sees a
 * debugger event becomes the master: it sends every other virtualized CPU
 * an NMI (NMI exiting brings each into VMX root, whatever its interrupt
 * flag), waits until all are parked, and serves the debugger. Parked CPUs
 * spin in VMX root with their registers snapshotted; resume releases them
 * with an action each (continue, step, stay).
 */
#ifndef VT_DEBUG_STOP_H
#define VT_DEBUG_STOP_H

#include "../core/guest_mem.h"
#include "target.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vt_vcpu;
struct vt_exit;
struct vt_guest_regs;

#define VT_STOP_MAX_CPUS	256	/* CPUs above this are not debugged */

struct vt_stop_cpu {
	u32 parked;		/* 1 while spinning in VMX root */
	u32 nmi_sent;		/* the master's NMI is on its way */
	bool missing;		/* did not park within the timeout */
	bool stepping;		/* released with one instruction to run */
	bool step_suspended;	/* parked with a TF step armed: re-armed on release */
	bool regs_dirty;	/* the debugger wrote regs: apply on release */
	enum vt_dbg_run run;
	struct vt_dbg_regs regs;
	struct vt_paging paging;
	struct vt_guest_regs *frame;	/* the exit's saved GPRs */
	struct vt_vcpu *vcpu;
};

/* The debugger's session with the stopped machine: returns once it resumed it. */
typedef void (*vt_stop_serve_fn)(u32 master, const struct vt_dbg_stop *why);

void vt_stop_init(struct vt_vcpu *const *vcpus, u32 nr_cpus, vt_stop_serve_fn serve);
/* Called by each CPU the master stops, in VMX root before it parks (after vt_stop_init). */
/* The TSC's rate, taken at load (VMX root reads no kernel variable). */
u64 vt_stop_tsc_khz(void);
void vt_stop_on_park(void (*fn)(struct vt_vcpu *vcpu));
/* Copy the all-stop state for the kernel (dbg_os.h), at load. */
int vt_stop_shield(void);
/* A debugger event on this CPU (VMX root, inside an exit handler). */
void vt_stop_machine(struct vt_vcpu *vcpu, struct vt_exit *exit, const struct vt_dbg_stop *why);
/* NMI exit: true when it was the master's NMI (the CPU parked). */
bool vt_stop_on_nmi(struct vt_vcpu *vcpu, struct vt_exit *exit);
/* Before every VM entry: park if a stop is under way. */
void vt_stop_pre_entry(struct vt_vcpu *vcpu, struct vt_exit *exit);
/* The end of a single step (MTF, or TF's #DB): true if the debugger asked for it. */
bool vt_stop_step_done(struct vt_vcpu *vcpu);

/* For the target ops, while stopped (master only). */
u32 vt_stop_cpu_count(void);
struct vt_stop_cpu *vt_stop_cpu(u32 cpu);	/* NULL unless parked */
/* Per-CPU actions for the release; -VT_EOPNOTSUPP if a CPU cannot single-step. */
int vt_stop_set_run(const enum vt_dbg_run *run, u32 count);
u64 vt_stop_last_tsc(void);	/* TSC cycles the last stop lasted */

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_STOP_H */
