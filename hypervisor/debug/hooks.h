/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hidden breakpoints and watchpoints (ept_bp.c, ept_watch.c, dr.c): the
 * mechanisms behind Z0..Z4. They change EPT and debug registers; the stop
 * machinery (stop.c) decides what a hit means for the machine.
 *
 * Insert/remove run on the master CPU with every CPU stopped; the EPT
 * generation they bump makes every CPU INVEPT before it re-enters the guest.
 * The on_* handlers run on the CPU that took the exit and return what they
 * made of it.
 */
#ifndef VT_DEBUG_HOOKS_H
#define VT_DEBUG_HOOKS_H

#include "target.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vt_hv;
struct vt_vcpu;
struct vt_exit;

/* Guest-virtual to guest-physical through CPU cpu's CR3 (guest_mem.c). */
typedef int (*vt_gva_translate_fn)(u32 cpu, u64 gva, u64 *gpa);
/*
 * Bytes of the running vCPU's guest memory read or written through its own
 * CR3, at any exit (a TF step reads the instruction and the IDT): the count
 * done, short where the walk stopped, or -VT_EFAULT.
 */
typedef int (*vt_own_mem_fn)(const struct vt_vcpu *vcpu, u64 gva, void *buf, u32 len,
			     bool write);

/*
 * At module load (may sleep): allocates shadow_pages page copies for split
 * views up front, since nothing may be allocated in VMX root.
 */
/* nr_cpus: the CPUs that may exit (indexes below it), each given its step's EPT view. */
int vt_hooks_init(struct vt_hv *hv, u32 shadow_pages, vt_gva_translate_fn translate, u32 nr_cpus);
/* vt_hooks_init() ran (the stub's, or the path tracer's for its TF steps). */
bool vt_hooks_ready(void);
/* After vt_hooks_init(); without it a TF step sees no instruction bytes. */
void vt_hooks_set_own_mem(vt_own_mem_fn own_mem);
/*
 * Hide the hooks' own pages (tables and split-view shadows) from the guest
 * with the hypervisor's shield; at load, after vt_hooks_init().
 */
int vt_hooks_shield(void);
/* Before vt_hv_fini(): puts hooked leaves back to identity, frees the shadows. */
void vt_hooks_fini(void);
/*
 * Every CPU calls this in VMX root right before it re-enters the guest
 * after a stop: it INVEPTs if the EPT changed and loads the debug
 * registers if the hardware breakpoints changed since its last call, and
 * turns the #BP intercept on or off (only the bit it set itself). It is
 * cheap when nothing changed, so it may also be called at other exits
 * (the preemption-timer poll): a watched page lifted for one instruction
 * on one CPU moves the EPT generation, and a CPU that cached the lifted
 * rights meanwhile flushes them there. A CPU virtualized while hooks
 * exist must call it before its first VM entry (its VMCS has no #BP
 * intercept and its debug registers are not loaded yet).
 */
void vt_hooks_on_resume(struct vt_vcpu *vcpu);
/*
 * Its EPT half alone (the INVEPT and the #BP intercept, no debug
 * registers): every VM entry runs it while a stub is loaded, so probes
 * armed while the machine runs reach each CPU at its next entry.
 */
void vt_hooks_sync_views(struct vt_vcpu *vcpu);

enum vt_hook_result {
	VT_HOOK_NOT_MINE,	/* the guest's own event: the core re-injects it */
	VT_HOOK_HANDLED,	/* absorbed silently (split-view switch, other bytes of a page) */
	VT_HOOK_STOP,		/* a debugger event: *stop says which; stop the machine */
};

/*
 * gpa/gva are the breakpoint's; the caller has translated through the CR3.
 * Inserting what exists and removing what does not succeed (gdb asks Z/z
 * to be idempotent). Errors: -VT_EOPNOTSUPP (no execute-only EPT for Z0,
 * no MTF for Z2-Z4), -VT_EBUSY (a page cannot hold both a Z0 and a
 * Z2-Z4), -VT_ENOMEM (shadow or EPT split pool exhausted), -VT_ENOSPC (all
 * records or all four debug registers in use), -VT_EINVAL (bad type or
 * range, or a watched page that does not translate).
 */
int vt_bp_insert(u64 gva, u64 gpa);
int vt_bp_remove(u64 gva);
int vt_watch_insert(enum vt_dbg_point type, u64 gva, u64 len, u32 cpu);
int vt_watch_remove(enum vt_dbg_point type, u64 gva, u64 len);
/*
 * A watch probe's range (probe_points.h), inside the one page at gpa: a
 * hit is recorded and the CPU goes on. The same errors; removed by
 * vt_watch_clear_owner(true).
 */
int vt_watch_insert_probe(enum vt_dbg_point type, u64 gva, u64 len, u64 gpa);
/*
 * While a Z1 exists the hooks own MOV-DR exiting and exception-bitmap bit 1
 * (#DB) on every CPU: a stepper that also intercepts #DB must not clear
 * that bit then. Leaving VMX while they own the debug registers would hand
 * the kernel the merged DR7: detach (remove_all, then a resume on every
 * CPU) before devirtualizing.
 */
/*
 * A crash guard: a hidden breakpoint on a kernel crash path (panic, oops)
 * that stops the machine with VT_STOP_CRASH. Armed before any CPU is
 * virtualized; detach leaves it; it disarms itself when hit.
 */
int vt_bp_guard(u64 gva, u64 gpa);
/*
 * A probe (probe_points.h): a hit records and goes on, never stops. Unlike
 * Z0 it may be inserted while other CPUs run: the caller first makes every
 * CPU take #BP exits (vt_hooks_intercept), then INVEPTs on each CPU. A
 * switch trigger (path_trace.h) is planted the same way, on the store
 * that makes a task current; its hit does that store in root (records
 * nothing), and the tracer looks at which task the CPU runs at its entry.
 */
int vt_bp_probe_insert(u64 gva, u64 gpa);
void vt_bp_probe_clear(void);
int vt_bp_switch_insert(u64 gva, u64 gpa);
void vt_bp_switch_clear(void);
bool vt_bp_switch_planted(void);
/* Who wants #BP exits on every CPU: probes, the switch trigger, or both. */
enum vt_intercept_holder {
	VT_INTERCEPT_PROBES = 1,
	VT_INTERCEPT_SWITCH = 2,
};
/* The holders left after this one's change. */
u32 vt_hooks_intercept(enum vt_intercept_holder holder, bool on);
bool vt_hooks_intercepting(enum vt_intercept_holder holder);
int vt_hwbp_insert(u64 gva);
int vt_hwbp_remove(u64 gva);
void vt_hooks_remove_all(void);
/* Guest memory written by the debugger: refresh the execute views. */
void vt_hooks_text_written(u64 gpa, u32 len);

enum vt_hook_result vt_hooks_on_ept_violation(struct vt_vcpu *vcpu, struct vt_exit *exit,
					      u64 gpa, u64 qual, struct vt_dbg_stop *stop);
enum vt_hook_result vt_hooks_on_breakpoint(struct vt_vcpu *vcpu, struct vt_exit *exit,
					   struct vt_dbg_stop *stop);
/*
 * #DB exit; dr6_bits is its exit qualification (B0-B3, BD, BS, RTM). STOP
 * (HWBREAK, RFLAGS.RF set so the instruction can resume) for a Z1 slot;
 * otherwise NOT_MINE, with the event written into the guest's DR6 (its
 * shadow or the register), since a #DB that exits does not update DR6.
 */
enum vt_hook_result vt_hooks_on_debug(struct vt_vcpu *vcpu, struct vt_exit *exit,
				      u64 dr6_bits, struct vt_dbg_stop *stop);
/*
 * An access to a watched page (or an instruction that both runs from and
 * reads a split page) is completed by one MTF step. This returns NOT_MINE
 * when this CPU has no such step pending. When it had one, it clears the
 * MTF control itself and returns HANDLED (nothing watched was touched) or
 * STOP; if the stepper had asked for a step of that same instruction, the
 * step is also complete then, and it should report it when it gets HANDLED.
 */
enum vt_hook_result vt_hooks_on_mtf(struct vt_vcpu *vcpu, struct vt_exit *exit,
				    struct vt_dbg_stop *stop);
/* MOV DR exit: emulate against the guest's shadow DRs. */
enum vt_hook_result vt_hooks_on_dr_access(struct vt_vcpu *vcpu, struct vt_exit *exit);
/*
 * The guest took an INIT: while the debug registers are ours, its shadows
 * take their INIT values and our slots stay (true); false when they are
 * the guest's own, for the core to reset.
 */
bool vt_hooks_on_init_signal(struct vt_vcpu *vcpu);

/* Counters and table use, for `monitor` (added by the hooks, not the seam). */
struct vt_hooks_stats {
	u64 bp_hits;		/* int3 exits that were ours */
	u64 stale_int3;		/* int3 from a view already gone: retried */
	u64 exec_flips;		/* data view -> execute view (shadow resynced) */
	u64 data_flips;		/* execute view -> data view */
	u64 stale_invepts;	/* violation the entry already allowed */
	u64 split_steps;	/* instructions stepped on a split page's original */
	u64 text_writes;	/* ...of which writes to it (the shadow re-copied after) */
	u64 watch_steps;	/* accesses to watched pages completed under MTF */
	u64 watch_walks;	/* ...of which the CPU's walks of guest page tables there */
	u64 watch_hits;
	u64 hw_hits;
	u64 dr_emulated;	/* MOV DR exits */
	u64 guard_hits;		/* crash guards that stopped the machine */
	u64 probe_hits;		/* int3 exits at a probe (probe_points.h) */
	u64 probe_skips;	/* ...that skipped a NOP in root: one exit */
	u64 probe_steps;	/* ...that stepped the original under MTF: two exits */
	u64 step_views_reused;	/* steps run in their CPU's EPT view as the last step of that page left it */
	u64 switch_hits;	/* int3 exits at the path tracer's switch trigger */
	u64 switch_emulated;	/* ...whose store root did: one exit */
	u64 tf_steps;		/* single steps done with TF (no MTF, or step_tf=1) */
	u64 tf_events;		/* guest events a TF step delivered with a clean frame */
	u64 tf_unhidden;	/* ...of which no debug register was free to stop at the handler */
	u32 bps, bp_pages, watches, watch_pages, hw_bps;
	u32 guards, guard_pages;	/* crash guards armed, pages only they split */
};
void vt_hooks_get_stats(struct vt_hooks_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_HOOKS_H */
