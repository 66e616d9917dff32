/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GDB stub in VMX root: what the OS layer calls. At load, before any
 * CPU is virtualized, vt_stub_init() takes the UART, asks the core for the
 * exits it needs and registers the debugger's callbacks.
 */
#ifndef VT_DEBUG_STUB_H
#define VT_DEBUG_STUB_H

#include "../core/guest_mem.h"
#include "target.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vt_hv;
struct vt_vcpu;

#define VT_STUB_POLL_MS		50	/* a 0x03 is seen within this much guest time */
#define VT_STUB_SHADOW_PAGES	64	/* pages that may hold breakpoints at once */

/* A crash path the stub guards with a hidden breakpoint (hooks.h). */
struct vt_crash_guard {
	const char *name;	/* for the log: "panic" */
	u64 gva, gpa;		/* the function's first byte */
	bool fatal;		/* the kernel does not come back from it (panic, not an oops) */
};

#define VT_STUB_MAX_GUARDS	4

struct vt_stub_config {
	u16 port;		/* 16550 I/O base */
	u32 baud;
	const struct vt_crash_guard *guards;
	u32 nr_guards;
	struct vt_vcpu *const *vcpus;	/* [nr_cpus], every possible CPU's, from load; NULL: none */
	u32 nr_cpus;
	u32 lockup_secs;	/* hard-lockup watch (lockup.h); 0 = off */
	bool step_tf;		/* single-step with TF even where MTF exists */
	u32 trace_records;	/* branch records per CPU for the tracer (tracer.h) */
	u32 trace_mode;		/* enum vt_trace_mode (tracer.h) */
	u32 trace_event_gap;	/* steps between two interrupts let in (tracer.h) */
	const u64 *current_task;	/* [nr_cpus]: gva of each CPU's current-task pointer, or NULL */
};

int vt_stub_init(struct vt_hv *hv, const struct vt_stub_config *cfg);
void vt_stub_fini(void);
/* Hide the stub's page allocations from the guest (core/shield.h). */
int vt_stub_shield(void);

/* stub_target.c: the RSP engine's view of the stopped machine. */
struct vt_dbg_target_ops;
extern const struct vt_dbg_target_ops vt_stub_target_ops;
const struct vt_guest_mem *vt_stub_guest_mem(void);
struct vt_hv *vt_stub_hv(void);

/*
 * Break-in latency in guest time (TSC ticks). The byte that completed the
 * break (a 0x03, or the last byte of a connecting debugger's first packet)
 * arrived after the last poll that left the line empty, so the span from
 * that poll to the stop reply bounds the latency from above.
 */
struct vt_breakin_stats {
	u64 count;
	u64 last_ticks, max_ticks;
};
void vt_stub_get_breakin(struct vt_breakin_stats *out);

/*
 * Why the machine stopped, in more words than the stop reply carries
 * ("monitor why"): the stop being served, and for a triple fault or a
 * lockup what the stub saw on that CPU.
 */
enum vt_stub_cause {
	VT_CAUSE_NONE,
	VT_CAUSE_TRIPLE_FAULT,	/* rip; vectoring: the event the CPU was delivering */
	VT_CAUSE_IRQS_OFF,	/* a lockup: interrupts off */
	VT_CAUSE_TIMER_OFF,	/* a lockup: interrupts on, the local APIC timer masked or the APIC off */
};

struct vt_stub_cause_info {
	u32 cause;		/* enum vt_stub_cause */
	u64 rip;
	u64 vectoring;		/* IDT-vectoring information (SDM Vol. 3C 24.9.3) */
};

struct vt_stub_why {
	bool stopped;		/* a stop is being served */
	struct vt_dbg_stop stop;
	struct vt_stub_cause_info info;
	u32 lockup_secs;
	/* TSC ticks from the stopping CPU's trap (exit) to its stop reply; 0: unknown */
	u64 reply_ticks;
};
void vt_stub_get_why(struct vt_stub_why *out);
/*
 * "monitor unload": the next detach makes every CPU leave VMX (hv->unloading).
 * Only a stealth load (hv->sealed), which has no kernel side to unload it:
 * -VT_EACCES otherwise (rmmod does it then).
 */
int vt_stub_ask_unload(void);
/* The debugger detached, with nothing of its own left armed. */
void vt_stub_detached(void);

/* stub_monitor.c: qRcmd ("monitor exits", "monitor caps", ...). */
int vt_stub_monitor(void *ctx, const char *cmd, char *out, u32 out_len);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_STUB_H */
