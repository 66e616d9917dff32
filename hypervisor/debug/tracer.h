/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hypervisor's branch tracer: per CPU, the taken branches the kernel
 * executes, found by stepping every instruction with the monitor trap flag
 * (SDM Vol. 3C 26.5.2) and decoding the one that ran (insn.h). It serves
 * gdb's branch-trace packets (Qbtrace:bts, qXfer:btrace:read) through the
 * stub, and the console's `trace`, which reads the same packets.
 *
 * What a CPU's trace holds:
 * - a BRANCH record (from -> to) for each taken branch that starts or ends
 *   in ring 0 (user code between a SYSRET and the next kernel entry is
 *   stepped but not recorded);
 * - an ASYNC BRANCH record (interrupted instruction -> handler) for each
 *   interrupt or exception delivered through the IDT, told apart from a
 *   branch because the instruction before it did not branch there;
 * - with a task filter, only what runs while that task is current; the
 *   first record after the task comes back carries TASK_SWITCH.
 * Records are kept from the start; once a CPU's buffer is full the CPU is
 * still stepped and the rest is counted as dropped, never silently lost.
 *
 * Enable and disable run on the master CPU with the machine stopped; the
 * traced CPU starts (reads its IDT, arms MTF) at its next VM entry.
 */
#ifndef VT_DEBUG_TRACER_H
#define VT_DEBUG_TRACER_H

#include "hooks.h"
#include <vtice/ring.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vt_hv;
struct vt_vcpu;
struct vt_exit;

#define VT_TRACE_MAX_CPUS	256	/* CPUs above these are not traced */

/*
 * How a traced CPU is stepped (docs/tracing.md, "CPU features each mode
 * needs"). AUTO takes branch steps where the CPU honours DEBUGCTL.BTF
 * (one exit per taken branch), else MTF (one per instruction). TF forces
 * TF steps, branch steps where BTF is honoured: on a CPU without BTF
 * (Bochs) one exit per instruction, the way to exercise the TF path.
 */
enum vt_trace_mode {
	VT_TRACE_MODE_AUTO,
	VT_TRACE_MODE_MTF,
	VT_TRACE_MODE_TF,
};

struct vt_tracer_config {
	struct vt_vcpu *const *vcpus;	/* [nr_cpus]: the CPUs a ring trace may kick */
	u32 nr_cpus;
	u32 records_per_cpu;		/* rounded down to whole pages; 0: ring traces only */
	const u64 *current_task;	/* [nr_cpus]: gva of each CPU's current-task pointer, or NULL */
	vt_own_mem_fn mem;		/* the running vCPU's memory through its own CR3 */
	enum vt_trace_mode mode;
	u32 event_gap;			/* steps between two interrupts let in (0: the default) */
};

/*
 * The tracer gates a traced CPU's interrupts and NMIs and lets one in at
 * most once per event_gap steps of that CPU (at once on a halted CPU). A
 * stepped CPU runs about a thousand times slower while timers keep real
 * time: delivered as they come, interrupts whose stepped handlers outlast
 * their period (the tick, on a slow enough CPU) would leave no step for
 * anything else. The gap bounds both how long an interrupt waits and how
 * much of a CPU's stepping its handlers take (docs/tracing.md). TF steps
 * need the gate anyway: they hold events, and each arms right after the
 * last, so the window the core would deliver them through never opens.
 */
#define VT_TRACE_EVENT_GAP	16384

/*
 * The longest a ring trace's CPU waits in VMX root for the reader to make
 * room, once its ring and its spill are full (the reader polls every few
 * milliseconds). Longer than the 100 ms for which Linux puts off all of a
 * CPU's timers when one of its timer interrupts took too long
 * (hrtimer_interrupt: "hrtimer: interrupt took N ns"), which a stepped one
 * does: the reader may sleep on such a timer (seen in Bochs: the waits that
 * ran out at 50 ms). A wait that runs out means the reader is gone or
 * cannot run: that CPU's trace waits no more until the reader makes room
 * again, and what fits nowhere meanwhile is dropped (counted).
 */
#define VT_TRACE_RING_HOLD_MS	VTICE_RING_WAIT_MS	/* 150 ms, uapi/vtice/ring.h */
/*
 * The same wait at a call's boundary, its SYSCALL or SYSRET, where the
 * traced CPU holds no kernel lock, so a longer wait costs no other CPU:
 * the wait that puts the spill through the ring before the call's end.
 * While every CPU is stepped the reader hardly runs (in Bochs its longest
 * gap between two reads was 16.7 s of guest time in one call), so at the
 * SYSRET it may have most of the call to drain, from a CPU whose timers
 * the stepping put off; 150 ms was too short there once in CI (1,847
 * records lost at the end of a traced clock_nanosleep).
 */
#define VT_TRACE_RING_BOUNDARY_MS	VTICE_RING_END_WAIT_MS	/* 1 s, uapi/vtice/ring.h */

/*
 * Records each CPU's trace holds (module parameter trace_records): the
 * stub's buffer, and a ring trace's spill (tracer_ring.c). At least a
 * page of them; at most 32 MiB per CPU.
 */
#define VT_TRACE_MIN_RECORDS	128u	/* a page: 4096 / sizeof(struct vtice_record) */
#define VT_TRACE_MAX_RECORDS	(1u << 20)

/*
 * At load (may sleep): allocates every CPU's buffer. TF steps need the
 * hooks' per-CPU state (hooks.h) set up before the first trace starts.
 */
int vt_tracer_init(struct vt_hv *hv, const struct vt_tracer_config *cfg);
/*
 * A ring trace on this CPU is about to store n records into its ring at
 * once (a syscall's group, at the call's SYSCALL or SYSRET): its spill goes
 * first, then wait (bounded, see VT_TRACE_RING_BOUNDARY_MS) until the ring
 * has room. False when it did not come.
 */
bool vt_tracer_wait_for_room(struct vt_vcpu *vcpu, u32 n);
/* One record of the ring trace on this CPU (tracer_ring.c: the ring or its spill). */
void vt_tracer_ring_put(struct vt_vcpu *vcpu, const struct vtice_record *rec);
/* Before the record that ends a ring trace: every CPU's spill in its ring (bounded). */
void vt_tracer_ring_settle(struct vt_vcpu *me);
/* What the tracer steps with: VTICE_TRACE_MTF/TF/BTF (ioctl.h), 0 for no tracer. */
u32 vt_tracer_mechanism(void);
/* It steps with TF (VTICE_TRACE_TF or _BTF). */
bool vt_tracer_uses_tf(void);
/* Hide the buffers from the guest (core/shield.h), at load. */
int vt_tracer_shield(void);
void vt_tracer_fini(void);
bool vt_tracer_supported(void);

/*
 * Machine stopped, master CPU. Enabling clears the CPU's trace and starts
 * a new one, recording only while the filter's task is current (a
 * task_struct address; 0: everything the CPU runs in ring 0;
 * VT_TRACE_TASK_CURRENT: the task each CPU runs when its trace starts).
 * -VT_EOPNOTSUPP without MTF, -VT_EINVAL for a CPU out of range.
 */
#define VT_TRACE_TASK_CURRENT	(~0ull)
void vt_tracer_set_filter(u64 task);
/*
 * Whether the next trace records each step (records.h, VTICE_REC_STEP):
 * -VT_EOPNOTSUPP unless the tracer steps with MTF.
 */
int vt_tracer_set_recording(bool on);
u64 vt_tracer_filter(void);
int vt_tracer_enable(u32 cpu);
int vt_tracer_disable(u32 cpu);
void vt_tracer_disable_all(void);
bool vt_tracer_enabled(u32 cpu);
/* Where the kernel keeps that CPU's current-task pointer (a gva), or 0. */
u64 vt_tracer_task_pointer(u32 cpu);

/* The records of cpu's trace, oldest first; valid while the machine is stopped. */
u64 vt_tracer_count(u32 cpu);
const struct vtice_record *vt_tracer_record(u32 cpu, u64 index);
/* Where the newest block ends: the last instruction the trace saw start. */
void vt_tracer_span(u32 cpu, u64 *first_ip, u64 *last_ip);

/*
 * Ring traces (path_trace.c), started and stopped from VMX root on any CPU
 * while the machine runs: every CPU follows at its next VM entry (the
 * others are sent an NMI so an idle one does not wait for its next exit),
 * records only while `task` is current, and writes the records into its
 * own ring (core/ring.h) instead of the debugger's buffer. `ended` is
 * called once, on the CPU where it happens, when the task reaches user
 * mode through anything but a SYSRET (whose exit the caller sees itself)
 * or has run max_insns instructions; it must call vt_tracer_ring_stop().
 * -VT_EBUSY while the debugger traces through the stub, and the stub's
 * enable gets -VT_EBUSY while a ring trace runs.
 */
enum vt_trace_end {
	VT_TRACE_END_USER = 2,		/* VTICE_TRACE_STOP_USER */
	VT_TRACE_END_MAX_INSNS = 3,	/* VTICE_TRACE_STOP_MAX_INSNS */
};
typedef void (*vt_trace_end_fn)(struct vt_vcpu *vcpu, enum vt_trace_end why);
int vt_tracer_ring_start(struct vt_vcpu *vcpu, u64 task, u64 max_insns, vt_trace_end_fn ended);
void vt_tracer_ring_stop(struct vt_vcpu *vcpu);
/* The traced task's instructions stepped since the ring trace started. */
u64 vt_tracer_ring_insns(void);
/* An NMI exit: true when it was a ring trace's kick (consumed). */
bool vt_tracer_on_nmi(struct vt_vcpu *vcpu);
/* A time stamp on the trace records' clock (never behind one already given). */
u64 vt_tracer_stamp(const struct vt_vcpu *vcpu);

/* VMX root, on the vCPU's own CPU. */
/*
 * The end of a step: an MTF exit, or the #DB of a TF step (single_step.h).
 * True when it was the tracer's step (it re-arms at entry).
 */
bool vt_tracer_on_mtf(struct vt_vcpu *vcpu, struct vt_exit *exit);
/* Before every VM entry: starts, arms or disarms this CPU's stepping. */
void vt_tracer_pre_entry(struct vt_vcpu *vcpu);

struct vt_tracer_stats {
	u64 steps;		/* step exits taken for the trace (MTF, or TF's #DB) */
	u64 branch_steps;	/* ...of them branch steps (BTF) */
	u64 btf_ignored;	/* branch steps that trapped after one instruction: BTF off since */
	u64 lbr_branches;	/* branches taken from the LBR stack: handlers that ran inside a step */
	u64 events_let_in;	/* interrupts and NMIs a TF trace held, then delivered */
	u64 records, dropped;
	u64 async;		/* interrupts and exceptions recorded */
	u64 filtered;		/* steps while another task was current */
	u64 undecoded;		/* steps whose instruction could not be read or decoded */
	u32 capacity;		/* records per CPU */
	u32 cpus_on;
};
void vt_tracer_get_stats(struct vt_tracer_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_TRACER_H */
