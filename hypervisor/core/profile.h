/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VMX-preemption timer and the sampling profiler that uses it.
 *
 * The timer counts down while the CPU runs the guest, one tick each time
 * TSC bit N changes (N = IA32_VMX_MISC[4:0]), and exits at zero (SDM 3C
 * 26.5.1). Two users share a CPU's timer: the stub's poll, every
 * hv->preempt_ticks on every CPU from load, and the profiler, every
 * sample_ticks on the CPUs it is armed on. Each keeps its own countdown;
 * the timer is loaded with the nearer one, and an expiry serves whichever
 * came due (timer.c). profile.c writes the samples (records.h).
 */
#ifndef VT_CORE_PROFILE_H
#define VT_CORE_PROFILE_H

#include "types.h"
#include "syscall_trap.h"	/* struct vt_sys_filter */
#include <vtice/ioctl.h>
#include <vtice/records.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vt_exit;
struct vt_guest_regs;
struct vt_hv;
struct vt_vcpu;

/*
 * The records of the largest group built with a stack: a probe hit's head,
 * ARGS12, ARGS34, ARG5, TASK, COMM and REGS, then the stack's (a sample has
 * no ARGS).
 */
#define VT_CAPTURE_GROUP_MAX	VTICE_PROBE_GROUP_MAX
VT_STATIC_ASSERT(VTICE_STACK_RECORDS_MAX == VTICE_PROFILE_STACK_MAX / 16, "records.h and ioctl.h agree");

struct vt_timer {
	u64 loaded;		/* ticks the timer was last loaded with; 0 = not running */
	u64 poll_left;		/* ticks to the stub's next poll */
	u64 sample_ticks;	/* the profiler's period; 0 = not sampling */
	u64 sample_left;	/* ticks to the next sample */
};

/*
 * A sample, or a probe hit with its stack, is built here in VMX root: too
 * big for root's stack. One exit builds one group at a time.
 */
struct vt_profile_vcpu {
	u32 stack_bytes;	/* kernel stack copied per sample */
	u32 stub_seen;		/* the stub's profiler (struct vt_profile_stub) this CPU applied */
	bool by_stub;		/* its sampling, if any, is the stub's (kept until the kernel side's VMCALL) */
	struct vt_sys_filter filter;	/* the task sampled; empty: any */
	struct vtice_record recs[VT_CAPTURE_GROUP_MAX];
	u64 stack[VTICE_PROFILE_STACK_MAX / 8];
};

/*
 * The profiler the debug stub arms (profile: probes through it,
 * debug/rsp_probes.c): set while every CPU is parked, applied by each CPU
 * as it leaves the stop (a CPU's timer is its own VMCS's). While on, the
 * kernel side's VMCALL is refused (busy).
 */
struct vt_profile_stub {
	u32 gen;		/* bumped by each change */
	bool on;
	u64 period_tsc;		/* TSC ticks between two samples */
	u32 stack_bytes;
	struct vt_sys_filter filter;
};

#define VT_TIMER_POLL		VT_BIT(0)	/* the stub's poll came due */
#define VT_TIMER_SAMPLE		VT_BIT(1)	/* ...a sample */

/* ---- timer.c, in VMX root on the current vCPU ---- */
/* At VMCS setup: the stub's poll, if any, counts from its first period; no sampling. */
void vt_timer_init(struct vt_vcpu *vcpu);
/* At the timer's exit: which users came due (VT_TIMER_*); reloads it. */
u32 vt_timer_expired(struct vt_vcpu *vcpu);
/* Start (ticks > 0) or stop sampling on this CPU; -VT_* on failure. */
int vt_timer_set_sampling(struct vt_vcpu *vcpu, u64 ticks);

/* ---- profile.c ---- */
/* The VMCALL (vmcall.h VTICE_VMCALL_PROFILE): a status; *samples = this CPU's count. */
u64 vt_profile_vmcall(struct vt_vcpu *vcpu, const struct vt_guest_regs *r, u64 *samples);
/*
 * The stub's profiler, with every CPU parked: on (every period_tsc, with
 * stack_bytes of stack, the filter's task only) or off. The caller has
 * checked that the kernel side samples on no CPU. 0, -VT_EOPNOTSUPP (no
 * VMX-preemption timer) or -VT_EINVAL.
 */
int vt_profile_stub_set(struct vt_hv *hv, bool on, u64 period_tsc, u32 stack_bytes,
			const struct vt_sys_filter *filter);
/* On leaving a stop: sample or stop on this CPU as the stub last asked. */
void vt_profile_stub_sync(struct vt_vcpu *vcpu);
/*
 * This CPU samples for the kernel side (VTICE_VMCALL_PROFILE), which the
 * stub must leave alone; a stub's sampling that an off has not reached yet
 * (the CPU still parked) is not.
 */
bool vt_profile_kernel_sampling(const struct vt_vcpu *vcpu);
/* One sample of where the guest is, into the CPU's ring. */
void vt_profile_sample(struct vt_vcpu *vcpu);
/*
 * bytes of the guest's stack from rsp up as STACK records, from
 * vcpu->profile.recs[n] on: the new n. A stack the guest left unmapped
 * gives fewer.
 */
u32 vt_put_stack(struct vt_vcpu *vcpu, u64 rsp, u32 bytes, u32 n);

#ifdef __cplusplus
}
#endif

#endif /* VT_CORE_PROFILE_H */
