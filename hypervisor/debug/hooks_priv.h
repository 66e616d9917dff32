/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State shared by the hook mechanisms (hooks.c, ept_bp.c, ept_watch.c,
 * dr.c). Everything is sized at vt_hooks_init(): VMX root never allocates.
 *
 * One lock serialises the tables. Inserts and removes take it with every
 * other CPU parked; the violation and MTF handlers take it on whichever CPU
 * exits, because the EPT is one structure that all CPUs walk.
 */
#ifndef VT_DEBUG_HOOKS_PRIV_H
#define VT_DEBUG_HOOKS_PRIV_H

#include "hooks.h"
#include "dbg_os.h"
#include "../core/exit.h"

#define VT_HOOKS_MAX_CPUS	256
#define VT_BP_PER_SHADOW	16	/* breakpoint records per shadow page... */
#define VT_BP_MIN		256	/* ...and at least this many */
#define VT_WATCH_MAX		256	/* Z2/Z3/Z4 ranges */
#define VT_WATCH_PAGES_MAX	512	/* 4 KiB pages they cover */
#define VT_STEP_PAGES		8	/* pages one instruction may need lifted */
/*
 * An EPT violation reports where an access starts, not its size. An access
 * counts as touching a watched range when it starts inside it or at most
 * VT_WATCH_ACCESS_MAX - 1 bytes before it (a general-purpose register's
 * width): wider accesses that start further below are missed.
 */
#define VT_WATCH_ACCESS_MAX	8
#define VT_INT3			0xcc

/* Leaf bits that survive a change of view: memory type, IPAT, suppress-#VE. */
#define VT_EPT_KEEP_MASK	(~(VMX_EPT_ADDR_MASK | VMX_EPT_RWX_MASK | \
				   VMX_EPT_ACCESS_BIT | VMX_EPT_DIRTY_BIT))

/* One 4 KiB page with breakpoints: its shadow copy and its two views. */
struct vt_split_page {
	bool used;
	bool exec_view;		/* the leaf maps the shadow (else the original) */
	u64 gpa;		/* page base */
	u64 *leaf;		/* the 4 KiB EPT entry */
	u64 identity;		/* the entry before the split view */
	u8 *shadow;		/* preallocated; owned by this record */
	u64 shadow_pa;
	u32 bps;		/* breakpoints on this page */
	u64 offs[VT_PAGE_SIZE / 64];	/* bitmap: offsets holding 0xCC */
};

enum vt_bp_kind {
	VT_BP_USER,		/* the debugger's Z0: a hit stops the machine */
	VT_BP_GUARD,		/* a crash guard: outlives detach, one-shot */
	VT_BP_PROBE,		/* a probe: a hit is recorded, the CPU goes on */
	VT_BP_SWITCH,		/* the path tracer's switch-in trigger: a hit is an exit, no more */
};

struct vt_sw_bp {
	bool used;
	enum vt_bp_kind kind;
	u64 gva, gpa;
};

struct vt_watch {
	bool used;
	bool probe;		/* a watch probe's (records, never stops), else the debugger's */
	enum vt_dbg_point type;
	u64 gva, len;
};

/* A page covered by watch ranges, seen through one linear page. */
struct vt_watch_page {
	bool used;
	u64 gva, gpa;		/* page bases */
	u64 *leaf;
	u64 identity;
	u64 protected_entry;	/* identity minus the rights the watches need */
};

enum vt_step_kind {
	VT_STEP_WATCH,		/* a watched page, its identity entry in the step's view */
	VT_STEP_SPLIT,		/* a split page, its original frame RWX in the step's view */
};

/* One data access seen by a violation, judged when the instruction completes. */
struct vt_access {
	u64 gpa;
	u64 gla;
	bool gla_valid;		/* qual bits 7 and 8: a linear access, GLA known */
	bool paging;		/* a guest paging-structure access (qual 7=1, 8=0) */
	bool read, write;
};

/*
 * The instruction this CPU is completing under MTF with protections lifted,
 * in its own view of the EPT (step.c).
 */
struct vt_step {
	bool active;
	u64 rip;		/* the instruction being completed */
	u32 pages;
	u64 gpa[VT_STEP_PAGES];
	enum vt_step_kind kind[VT_STEP_PAGES];
	u32 accesses;
	struct vt_access access[VT_STEP_PAGES];
};

/* A single step done with RFLAGS.TF on this CPU (single_step.c). */
enum vt_tf_insn {
	VT_TF_PLAIN,		/* reads no RFLAGS and loads none */
	VT_TF_PUSHF,		/* pushes RFLAGS: TF is cleared in the pushed copy */
	VT_TF_SYSCALL,		/* ends at the kernel's entry (a lent register), or TF cleared in R11 */
	VT_TF_SYSRET,		/* ends at RCX (a lent register), or as VT_TF_LOADS_FLAGS */
	VT_TF_LOADS_FLAGS,	/* POPF, IRET: the TF it loads is the guest's */
	VT_TF_INT_N,		/* INT n: injected by us, not run under TF */
	VT_TF_EVENT,		/* an event delivered first: the step ends in its handler */
	VT_TF_HALTED,		/* HLT, or a halted CPU: the step ends at the next poll */
};

struct vt_tf_step {
	bool active;
	bool guest_tf;		/* RFLAGS.TF as the guest had it */
	bool tf_set;		/* we set RFLAGS.TF for this step */
	bool branch;		/* DEBUGCTL.BTF set: the step ends after a taken branch */
	bool ended_branch;	/* the last step ended as a branch step (until the next arm) */
	bool unit;		/* no debug register to lend: a handler runs as the step */
	enum vt_tf_insn insn;
	u32 added;		/* exception-bitmap bits the step set */
	bool lent;		/* a debug register traps a handler's first instruction */
	u32 slot;
	u64 saved_dr, saved_dr7;
};

struct vt_hooks_cpu {
	u64 ept_seen, dr_seen;		/* generations loaded on this CPU */
	bool bp_intercept;		/* we set exception-bitmap bit 3 */
	/* dr.c: the guest's own debug registers while the hypervisor owns them */
	bool dr_owned;
	u64 guest_dr[4], guest_dr6, guest_dr7;
	s32 guest_slot[4];		/* physical slot -> guest index, -1: none */
	/* ept_bp.c: detects an instruction that fetches and reads one page */
	u64 last_exec_gpa, last_exec_rip;
	bool last_exec_valid;
	struct vt_step step;		/* step.c */
	struct vt_ept_view view;	/* ...the EPT while it runs; no block: none */
	bool view_kept;			/* the view lifts view_page alone, built at ept_gen view_gen */
	u64 view_page, view_gen;
	struct vt_tf_step tf;		/* single_step.c */
};

struct vt_hooks {
	struct vt_hv *hv;
	vt_gva_translate_fn translate;
	vt_own_mem_fn own_mem;
	u32 lock;
	u64 ept_gen, dr_gen;
	u32 cpus_seen;			/* highest CPU index seen + 1 */
	struct vt_hooks_cpu *cpu;	/* VT_HOOKS_MAX_CPUS */
	u32 nr_views;			/* CPUs below this have a step view */
	/* ept_bp.c */
	struct vt_split_page *split;
	u32 nr_split;
	struct vt_sw_bp *bp;
	u32 nr_bp, bps_used, guards_used, probes_used, switches_used;
	u32 intercept_holders;		/* VT_INTERCEPT_*: #BP exits on every CPU while any holds */
	/* ept_watch.c */
	struct vt_watch watch[VT_WATCH_MAX];
	struct vt_watch_page wpage[VT_WATCH_PAGES_MAX];
	/* dr.c: the debugger's Z1 slots */
	bool hw_used[4];
	u64 hw_addr[4];
	u32 hw_count;
	struct vt_hooks_stats stats;
	bool prefer_tf;			/* single_step.c: TF even where MTF exists */
	bool trace_tf;			/* ...and while the tracer steps with TF */
	/* pages allocated for the tables above, for freeing and the shield */
	u32 cpu_pages, split_pages, bp_pages;
} VT_ROOT_STATE_TYPE;

extern struct vt_hooks vt_hooks;

/* hooks.c */
void vt_hooks_lock(void);
void vt_hooks_unlock(void);
struct vt_hooks_cpu *vt_hooks_cpu(const struct vt_vcpu *vcpu);
void vt_hooks_ept_changed(void);
void *vt_hooks_alloc(u32 bytes, u32 *pages);

/* ept_bp.c */
int vt_bp_alloc(u32 shadow_pages);
void vt_bp_free(void);
int vt_bp_shield(void);
struct vt_split_page *vt_bp_find_page(u64 gpa);
bool vt_bp_page_only_guards(const struct vt_split_page *p);
void vt_bp_rearm(u64 gpa);
void vt_bp_clear_all(void);
void vt_bp_clear_kind(enum vt_bp_kind kind);
enum vt_hook_result vt_bp_on_violation(struct vt_vcpu *vcpu, struct vt_split_page *p,
				       u64 qual);

/* ept_watch.c */
struct vt_watch_page *vt_watch_find_page(u64 gpa);
void vt_watch_clear_all(void);
void vt_watch_clear_owner(bool probe);
enum vt_hook_result vt_watch_on_violation(struct vt_vcpu *vcpu, u64 gpa, u64 qual);
bool vt_watch_match(const struct vt_access *a, bool probe, struct vt_dbg_stop *stop);

/* step.c */
enum vt_hook_result vt_step_begin(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c);
bool vt_step_add(struct vt_hooks_cpu *c, u64 gpa, enum vt_step_kind kind);
int vt_step_view_sync(struct vt_hooks_cpu *c);
/*
 * A running step's view rebuilt after the shared tables or its pages
 * changed; a view that cannot hold them is reported and NOT_MINE.
 */
enum vt_hook_result vt_step_view_resync(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c);

/* dr.c */
void vt_dr_sync(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c);
void vt_dr_clear_all(void);

#endif /* VT_DEBUG_HOOKS_PRIV_H */
