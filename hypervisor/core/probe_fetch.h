/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fetch programs (ioctl.h, struct vtice_fetch_op): what a probe's hit reads
 * of guest memory through its arguments, its return value, its registers
 * or the current task, run in VMX root at the hit. The program is checked
 * whole before any hit can run it, and has no jumps: it
 * runs each of its at most VTICE_FETCH_OPS_MAX ops once, reads at most 8
 * bytes an op as the guest itself would (vt_own_mem), and writes at most
 * VTICE_FETCH_VALUES_MAX VALUE records and one string.
 */
#ifndef VT_CORE_PROBE_FETCH_H
#define VT_CORE_PROBE_FETCH_H

#include "types.h"
#include <vtice/ioctl.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vt_guest_regs;
struct vt_vcpu;
struct vtice_record;

/* The program's ops as the VMCALL carries them (vmcall.h, PROBE_FETCH). */
struct vt_fetch_program {
	u64 ops[VTICE_FETCH_OPS_MAX];
};

/* The rules of ioctl.h: true when every hit may run it. */
bool vt_fetch_valid(const struct vt_fetch_program *prog);

/* The op that ended a counted hit, and its value (0 for COUNT). */
struct vt_fetch_end {
	u32 op;		/* VTICE_FETCH_COUNT, _SUM, _MIN, _MAX, _HIST, _LHIST or _KEYED */
	u32 key_kind;	/* KEYED's enum vtice_fetch_key */
	u64 value;	/* the accumulator cut to the op's width */
	s64 base;	/* LHIST's first bucket's low end */
	u64 imm;	/* the op's: LHIST's bucket width (above 0), KEYED's SUM, MIN, MAX or 0 */
	u64 key[2];	/* KEYED's key: KEY's values (or the accumulator) set here; a task's or the
			   CPU's put first by the caller (it knows the task), before KEY's one */
	u32 keys;	/* KEY ops that ran */
	u32 records;	/* recs' n with the VALUE records the program wrote before it: a KEYED
			   hit without a slot is recorded with them, so that the console has its key */
	u32 unreadable;	/* values it used that a faulting LOAD left 0 (each counted once) */
};

/*
 * Run prog at a hit with the function's registers r and the current
 * task's address (0: unknown): its VALUE and STRING records into recs[n]
 * on (recs[0] the group's head); the new n, or 0 when a KEEP did not hold
 * (the hit is not recorded), or VT_FETCH_COUNTED when COUNT, SUM, MIN,
 * MAX, HIST, LHIST or KEYED ended it (the hit is counted, not recorded; *end says which and
 * with what value).
 */
#define VT_FETCH_COUNTED	0xffffffffu
u32 vt_fetch_run(const struct vt_vcpu *vcpu, const struct vt_guest_regs *r, u64 task,
		 const struct vt_fetch_program *prog, struct vtice_record *recs, u32 n, struct vt_fetch_end *end);

/* One of KEYED's slots: free, taken by a CPU writing its key, or counting. */
enum vt_fetch_slot_state { VT_SLOT_FREE, VT_SLOT_TAKEN, VT_SLOT_COUNTING };

struct vt_fetch_key_slot {
	u64 state;	/* enum vt_fetch_slot_state */
	u64 key[2];	/* set while TAKEN, then never changed */
	u64 count;
	u64 kept;	/* what a KEYED with an imm keeps: a sum, a least or greatest value */
};

/* What root counted at one probed address since it was added. */
struct vt_fetch_totals {
	u64 counted;	/* hits its program's COUNT, SUM, MIN, MAX, HIST, LHIST or KEYED counted */
	u64 kept;	/* what its SUM added up, or the value MIN or MAX kept */
	u64 unreadable;	/* values those hits used that a faulting LOAD left 0 */
	u64 hist[VTICE_FETCH_HIST_BUCKETS];	/* HIST's or LHIST's hits per bucket */
	struct vt_fetch_key_slot keys[VTICE_FETCH_KEYED_SLOTS];	/* KEYED's */
};

/*
 * Totals for an address whose hits run prog (NULL: none), before any: kept is 0 for
 * COUNT, SUM and HIST, INT64_MAX for MIN, INT64_MIN for MAX (ioctl.h).
 */
void vt_fetch_totals_start(const struct vt_fetch_program *prog, struct vt_fetch_totals *t);

/* The HIST bucket of value, a signed number (ioctl.h). */
u32 vt_fetch_hist_bucket(u64 value);

/* The LHIST bucket of value, a signed number, for base and width (above 0; ioctl.h). */
u32 vt_fetch_lhist_bucket(u64 value, s64 base, u64 width);

/*
 * A counted hit (VT_FETCH_COUNTED, end from vt_fetch_run) into its
 * address's totals: counted + 1, and kept, hist or keys as end's op says
 * (SUM adds, MIN and MAX keep the least or greatest, as signed numbers,
 * HIST and LHIST add 1 to the value's bucket, KEYED 1 to its key's slot,
 * and keeps the value there as its imm says; unreadable adds end's). Safe
 * against other CPUs' hits at the same address. False, and nothing
 * counted, when KEYED finds no slot for its key: the hit is to be
 * recorded instead.
 */
bool vt_fetch_tally(const struct vt_fetch_end *end, struct vt_fetch_totals *t);

/*
 * What a KEYED slot holds, for VTICE_VMCALL_PROBE_KEY: part 0 its count
 * (0 while it is not counting), 1 and 2 its key's words, 3 what it kept.
 */
u64 vt_fetch_key_slot_read(const struct vt_fetch_totals *t, u32 slot, u32 part);

#ifdef __cplusplus
}
#endif

#endif /* VT_CORE_PROBE_FETCH_H */
