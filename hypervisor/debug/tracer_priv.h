/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The branch tracer's state and the helpers its two files share: tracer.c
 * (enable, MTF steps, records, ring traces) and tracer_tf.c (TF and
 * branch steps, and the LBR stack that names their branches).
 */
#ifndef VT_DEBUG_TRACER_PRIV_H
#define VT_DEBUG_TRACER_PRIV_H

#include "tracer.h"
#include "insn.h"
#include "lbr_stream.h"
#include "step_windows.h"
#include "dbg_os.h"
#include <vtice/ioctl.h>

#define VT_IDT_GATES		256
#define VT_IDT_GATE_SIZE	16
#define VT_GATE_PRESENT		0x80	/* byte 5 of a gate (SDM 3A 6.14.1) */
#define VT_INSN_BYTES		15

struct vt_trace_cpu {
	bool on;		/* enabled by the debugger, or following a ring trace */
	bool to_ring;		/* records go to the vCPU's ring, not rec[] */
	bool kick;		/* a ring trace's NMI is on its way here */
	u32 ring_gen;		/* the ring trace generation this CPU follows */
	bool started;		/* this CPU read its IDT for the trace */
	bool armed;		/* a step armed for the tracer at the last entry */
	bool gating;		/* the trace lets its interrupts in (vt_gate_events) */
	bool no_btf;		/* a branch step trapped after one instruction: plain steps */
	bool lbr;		/* TF: the LBR stack names the branches of each step */
	bool owns_lbr;		/* ...turned on in the guest's DEBUGCTL by the trace */
	struct vt_lbr_mark mark;	/* where the stack stood at the last step's end */
	bool have_entry;
	u8 entry_cpl;
	u64 entry_rip;		/* RIP at the last VM entry while armed */
	u64 task;		/* the filter: 0 = any task */
	bool task_here;		/* ring, switch trigger: the task was current when last known */
	u64 first_ip, last_ip;	/* where the trace began, where it is now */
	u64 *handlers;		/* sorted IDT handler addresses */
	u32 nr_handlers;
	struct vtice_record *rec;	/* the debugger's buffer, or a ring trace's spill */
	u64 spill_in, spill_out;	/* ring traces: records into and out of the spill */
	u64 count;
	u64 steps, dropped, async, filtered, undecoded;
	bool hold_gave_up;	/* a wait ran out: this trace waits no more */
	u64 branch_steps, btf_ignored, lbr_branches;
	u32 since_event;	/* steps since the tracer last let a held event in */
	u64 events_let_in;
	/* A recorded trace (tracer_record.c) */
	bool recording;
	bool rec_open;		/* a step's "before" is held: rec_rip, windows */
	bool rec_have_regs;	/* the reader knows the registers as the last recorded step left them */
	u64 rec_rip;
	bool rec_insn_ok;	/* rec_insn holds the instruction at rec_rip, decoded once for the step */
	struct vt_insn rec_insn;
	struct vt_step_windows windows;
	u64 rec_regs[VTICE_STEP_REGS];	/* as the open step found them */
};

/* A ring trace (tracer.h): written by the CPU that starts or stops it. */
struct vt_ring_trace {
	u32 gen;		/* bumped (release) by every start and stop */
	bool active;
	bool holding;		/* the traced CPU waits in root for its reader */
	/*
	 * A switch trigger is planted (path_trace.h): a CPU steps only while
	 * the task is current on it, and one that switches to it exits there.
	 */
	bool task_only;
	u32 start_cpu;		/* where the task was current when the trace started */
	u64 task;
	u64 max_insns;
	u64 insns;		/* the task's instructions stepped, all CPUs */
	vt_trace_end_fn ended;
};

struct vt_tracer {
	struct vt_hv *hv;
	vt_own_mem_fn mem;
	struct vt_vcpu *const *vcpus;
	struct vt_ring_trace ring;
	u32 nr_cpus;
	u32 mechanism;		/* VTICE_TRACE_MTF, _TF or _BTF */
	u32 event_gap;		/* steps between two events let in (tracer.h) */
	struct vt_lbr_model lbr;	/* TF: this CPU model's last-branch stack, if any */
	u32 capacity;		/* records per CPU */
	u32 pages;		/* per CPU: one page of handlers, then the records */
	u64 filter;		/* the task the next enable traces, 0 = any */
	bool record;		/* the next trace records each step (MTF only) */
	u64 hold_ticks;		/* the longest a ring trace waits for room in a call (TSC) */
	u64 boundary_ticks;	/* ...and at the call's SYSCALL or SYSRET */
	u64 last_stamp;		/* the newest record's time stamp, on any CPU */
	u64 task_ptr[VT_TRACE_MAX_CPUS];
	struct vt_trace_cpu cpu[VT_TRACE_MAX_CPUS];
} VT_ROOT_STATE_TYPE;

extern struct vt_tracer vt_tracer;

/* tracer.c */
/* Did the instruction at `from` (decoded) branch to `to`, or was it interrupted? */
bool vt_trace_branched(const struct vt_trace_cpu *c, const struct vt_insn *insn, u64 from, u64 to);
void vt_trace_store(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u16 type, u32 flags, u64 a, u64 b);
void vt_trace_push(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u64 from, u64 to, u32 flags);
/* One instruction ran from c->entry_rip and the CPU is at `to` now. */
void vt_trace_step(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u64 to, u8 cpl);

/* tracer_ring.c */
/* Each CPU but this one that runs as a guest is sent an NMI: it follows at its next entry. */
void vt_trace_kick_others(struct vt_vcpu *me);
/* A ring trace's record: into the ring, or the spill while the ring is full. */
void vt_trace_ring_store(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, const struct vtice_record *rec);
/* The spill into the ring as far as it has room (at every entry of the CPU). */
void vt_trace_spill_flush(struct vt_trace_cpu *c, struct vt_vcpu *vcpu);
/* This CPU's part of a ring trace ended: the spill flushed, the rest counted lost. */
void vt_trace_spill_end(struct vt_trace_cpu *c, struct vt_vcpu *vcpu);

/* tracer_record.c */
/* The VM entry that arms a step of the traced task: its "before", unless one is open already. */
void vt_trace_record_open(struct vt_trace_cpu *c, struct vt_vcpu *vcpu);
/* The step that ran from c->rec_rip ended at `to`, in an IDT handler if `delivered`: its group of records. */
void vt_trace_record_close(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u64 to, bool delivered);
/* A step not to record (user code, another task): the open one is dropped. */
void vt_trace_record_drop(struct vt_trace_cpu *c);

/* tracer_tf.c */
/* The LBR entries since the last step's end (the mark moves, recorded or not). */
u32 vt_trace_lbr_since(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, struct vtice_lbr_entry *br,
		       bool *wrapped);
/* A TF step ended at `to`: the instructions it ran. */
u32 vt_trace_tf_step(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u64 to, u8 cpl,
		     const struct vtice_lbr_entry *br, u32 n, bool wrapped);
/* The LBR stack on (at the CPU's trace start) or given back (at its end). */
void vt_trace_use_lbr(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, bool on);

#endif /* VT_DEBUG_TRACER_PRIV_H */
