/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * VMCALL ABI between the vtice module's kernel side (guest, CPL 0) and its
 * hypervisor (VMX root).
 *
 *   RAX = function (enum vtice_vmcall)
 *   RCX = the per-load random key (known only to the module; never exported)
 *   RDX, R8, R9, R10 = arguments
 * returns
 *   RAX = 0 or a negative VTICE_VMCALL_E* status, RDX = result value,
 *   RCX = 0 (the key is not left in a register the kernel may save)
 *
 * A VMCALL from CPL > 0 (guest SS.DPL != 0), from outside 64-bit mode, or
 * with a wrong key gets #UD injected and nothing else happens: to anyone
 * without the key the instruction behaves as on a CPU without VMX.
 */
#ifndef VTICE_UAPI_VMCALL_H
#define VTICE_UAPI_VMCALL_H

enum vtice_vmcall {
	VTICE_VMCALL_PING = 1,		/* RDX = VTICE_VMCALL_PONG */
	VTICE_VMCALL_DEVIRTUALIZE = 2,	/* leave VMX on this CPU */
	VTICE_VMCALL_EMIT_TEST = 3,	/* RDX = count, R8 = value; RDX out = stored */
	VTICE_VMCALL_INVEPT = 4,	/* flush EPT translations on this CPU */
	/*
	 * Syscall events on this CPU: RDX = VTICE_VMCALL_SYSCALLS_ON or 0,
	 * R8 = pid filter (a task's pid or tgid; 0 = any), R9 and R10 = comm
	 * filter (bytes 0-7 and 8-15, NUL-padded; 0 = any). The filter is
	 * taken only by an arming call. ENOSYS: this CPU cannot (no EFER
	 * load control, or CET on). EBUSY: the debug stub's trap is armed
	 * (syscall: probes through it).
	 */
	VTICE_VMCALL_SYSCALLS = 5,
	/*
	 * The profiler on this CPU: RDX = TSC cycles between samples (0 =
	 * stop), R8 bits 31:0 = bytes of kernel stack copied per sample (a
	 * multiple of 16, at most VTICE_PROFILE_STACK_MAX), bits 63:32 = pid
	 * filter (a task's pid or tgid; 0 = any), R9 and R10 = comm filter
	 * (as VTICE_VMCALL_SYSCALLS's): a sample of another task is not
	 * recorded. RDX out = samples recorded on this CPU since load.
	 * ENOSYS: no VMX-preemption timer; EINVAL: a period the timer cannot
	 * count, a bad stack size, or a comm without its NUL. EBUSY: the
	 * debug stub's profiler runs (profile: probes through it), which
	 * this call neither changes nor stops.
	 */
	VTICE_VMCALL_PROFILE = 6,
	/*
	 * Which syscalls' entry events copy a user string, for every CPU:
	 * RDX and R8 hold four 16-bit slots each, a slot = the syscall's
	 * number | N << 12, N = 1..6 for the string at argument N - 1 (0: an
	 * unused slot). EINVAL: an N above 6. Taken while no CPU is armed.
	 * EBUSY: the debug stub's trap is armed.
	 */
	VTICE_VMCALL_SYSCALL_STRINGS = 7,
	/*
	 * A stealth load (stealth=1), on every CPU once all run under the
	 * hypervisor: the first call shows the guest the decoy wherever the
	 * shield showed it a copy (the module's code and read-only data, the
	 * hypervisor's state, the key with it) and clears the copies; every
	 * call flushes its CPU's EPT translations. RDX = how many CPUs will
	 * call; the last of them seals: from then on no VMCALL is vtice's
	 * (#UD, or up to a parent hypervisor), whatever its key. RDX out = 1
	 * on the call that sealed. EINVAL: RDX = 0.
	 */
	VTICE_VMCALL_STEALTH = 8,
	/*
	 * Which syscalls' events are recorded, for every CPU: RDX = a word's
	 * index w (0..7) in a set of syscalls 0..511, R8 = its bits (bit b:
	 * syscall 64w + b); from then on only the set's are recorded, their
	 * exits judged by the number the entry code saved (pt_regs->orig_ax).
	 * RDX = VTICE_VMCALL_SYSCALL_NUMBERS_ALL: every syscall again, the set
	 * emptied. EINVAL: another RDX. EBUSY: the debug stub's trap is armed.
	 */
	VTICE_VMCALL_SYSCALL_NUMBERS = 9,
	VTICE_VMCALL_USER_BASE = 0x100,	/* forwarded to the debugger callback */
	/* Stop every CPU for the debug stub; RDX out = TSC cycles stopped. */
	VTICE_VMCALL_DEBUG_BREAK = VTICE_VMCALL_USER_BASE,
	/*
	 * The syscall-path tracer (one CPU is enough, its state is global):
	 * RDX = VTICE_VMCALL_PATH_{QUERY,ARM,DISARM}; ARM takes R8 = syscall
	 * number, R9 = instruction budget per call, R10 = calls to trace, with
	 * VTICE_VMCALL_PATH_RECORD set for a recorded trace (records.h,
	 * VTICE_REC_STEP; EINVAL unless the tracer steps with MTF). RDX out = calls traced to their end since the last ARM. ENOSYS:
	 * no tracer (no MTF); EINVAL: bad arguments; EBUSY (ARM): a debugger
	 * traces through the stub. The switch trigger (debug/path_trace.h),
	 * planted in probes' order (PROBES below): SWITCH_INTERCEPT takes R8 =
	 * 1 or 0; SWITCH_ADD R8 = the address, R9 = its guest-physical address
	 * (EINVAL without the intercept); SWITCH_CLEAR removes it.
	 */
	VTICE_VMCALL_PATH_TRACE = VTICE_VMCALL_USER_BASE + 1,
	/*
	 * Read one word of a CPU's LBR snapshot (any CPU's, from any CPU):
	 * RDX = cpu << 32 | item (enum vtice_vmcall_lbr_item, or
	 * VTICE_VMCALL_LBR_ENTRY + 3 * i + {0 from, 1 to, 2 flags | cycles << 32}).
	 * RDX out = the word. EINVAL: no such CPU or item.
	 */
	VTICE_VMCALL_LBR = VTICE_VMCALL_USER_BASE + 2,
	/*
	 * Probes (debug/probe_points.h), global state, from any CPU: RDX = op
	 * (enum vtice_vmcall_probe_op). INTERCEPT: R8 = 1 to take #BP exits
	 * on every CPU from its next VM entry (before any probe exists), 0 to
	 * stop; ADD: R8 = the address, R9 = its guest-physical address, R10
	 * = the fetch program its hits run (PROBE_FETCH below), with
	 * VTICE_VMCALL_PROBE_COPIES_STACK for its hits to copy the stack;
	 * CLEAR: every probe goes; FILTER: R8 = pid, R9 and R10 = comm, as for
	 * VTICE_VMCALL_SYSCALLS; STACK: R8 = bytes of the stack a hit of a
	 * probe added with VTICE_VMCALL_PROBE_COPIES_STACK copies (a multiple
	 * of 16, at most VTICE_PROFILE_STACK_MAX; 0 = none), R9 = 1 for each
	 * hit to copy the other registers too (GPRS records), 0 not to. RDX
	 * out = hits recorded since load. ENOSYS: no hooks;
	 * EINVAL: bad op or size; other negative values: the insert's error.
	 */
	VTICE_VMCALL_PROBES = VTICE_VMCALL_USER_BASE + 3,
};

#define VTICE_VMCALL_PROBE_KEEP_COUNTS	1ull	/* CLEAR's R8 */

enum vtice_vmcall_probe_op {
	VTICE_VMCALL_PROBE_QUERY = 0,	/* the hit count (RDX) alone */
	VTICE_VMCALL_PROBE_INTERCEPT = 1,
	VTICE_VMCALL_PROBE_ADD = 2,
	/*
	 * Every probe's breakpoint and watched range goes, so no hit counts
	 * after it returns. R8 = VTICE_VMCALL_PROBE_KEEP_COUNTS: what the
	 * addresses counted (COUNT, SUM, HIST, KEY) stays readable until the
	 * next CLEAR without it, so the last hits are read after the last hit;
	 * R8 = 0: they go too, and ADD starts from the first address again.
	 */
	VTICE_VMCALL_PROBE_CLEAR = 3,
	VTICE_VMCALL_PROBE_FILTER = 4,
	VTICE_VMCALL_PROBE_STACK = 5,
	/*
	 * R8 = a linear address, R9 = the guest-physical address of its page,
	 * R10 = len | type << 32 (enum vtice_probe_watch_type), with
	 * VTICE_VMCALL_PROBE_COPIES_STACK for its hits to copy the stack: the
	 * range, inside that one page, becomes a watch probe's. CLEAR removes
	 * it.
	 */
	VTICE_VMCALL_PROBE_WATCH = 6,
	/*
	 * R8 = a fetch program's number (0..VTICE_FETCH_PROGRAMS_MAX - 1), R9
	 * = an op's place in it, R10 = the op (struct vtice_fetch_op, ioctl.h,
	 * as a little-endian u64): one op of the program. ADD's R10 = N + 1
	 * runs program N at the address's hits (0: none); root checks the
	 * program then (EINVAL).
	 */
	VTICE_VMCALL_PROBE_FETCH = 7,
	/* R8 = an address's place in ADD's order: RDX = the hits its COUNT or SUM op counted. */
	VTICE_VMCALL_PROBE_COUNT = 8,
	/* R8 = the same: RDX = what its SUM op added up (wrapping, two's complement). */
	VTICE_VMCALL_PROBE_SUM = 9,
	/* RDX = the hits root's filter or a fetch program's KEEP passed over since load. */
	VTICE_VMCALL_PROBE_PASSED = 10,
	/*
	 * R8 = an address's place in ADD's order, R9 = a bucket (ioctl.h,
	 * VTICE_FETCH_HIST_BUCKETS): RDX = the hits its HIST or LHIST op counted there.
	 */
	VTICE_VMCALL_PROBE_HIST = 11,
	/*
	 * R8 = the same, R9 = a KEYED slot | part << 8 (ioctl.h,
	 * VTICE_FETCH_KEYED_SLOTS): RDX = the hits counted there (part 0; 0
	 * while the slot is free), its key's first or second word (1, 2), or
	 * what a KEYED with an imm kept there (3: ioctl.h).
	 */
	VTICE_VMCALL_PROBE_KEY = 12,
	/*
	 * The kernel side's alone, whoever armed the probes: R8 = a module's
	 * memory that is freed next, R9 = its bytes. If a breakpoint probe
	 * sits there, every probe goes as CLEAR with KEEP_COUNTS does (an
	 * int3 left there would run in whatever code comes there next): RDX
	 * = 1, and the times this happened since load (qVtice:probes:removed)
	 * count it; else RDX = 0.
	 */
	VTICE_VMCALL_PROBE_LEAVE = 13,
	/*
	 * R8 = an address's place in ADD's order: RDX = the values its
	 * program's counted hits used that a LOAD found unmapped (they gave
	 * 0; each read counted once a hit), the console's "unreadable_reads"
	 * for the hits it never sees.
	 */
	VTICE_VMCALL_PROBE_UNREADABLE = 14,
};

/*
 * In ADD's and WATCH's R10: the probe's hits copy STACK's bytes of the
 * stack (a program's kstack); the others copy none, so a probe that does
 * not read the stack costs no ring space for it.
 */
#define VTICE_VMCALL_PROBE_COPIES_STACK	(1ull << 63)

#define VTICE_VMCALL_PATH_RECORD	(1ull << 63)

enum vtice_vmcall_path_op {
	VTICE_VMCALL_PATH_QUERY = 0,
	VTICE_VMCALL_PATH_ARM = 1,
	VTICE_VMCALL_PATH_DISARM = 2,
	VTICE_VMCALL_PATH_SWITCH_INTERCEPT = 3,
	VTICE_VMCALL_PATH_SWITCH_ADD = 4,
	VTICE_VMCALL_PATH_SWITCH_CLEAR = 5,
};

enum vtice_vmcall_lbr_item {
	VTICE_VMCALL_LBR_SEQ = 0,	/* odd while the snapshot is being written */
	VTICE_VMCALL_LBR_HEADER = 1,	/* event | count << 8 | flags << 16 | snapshots << 32 */
	VTICE_VMCALL_LBR_TSC = 2,
	VTICE_VMCALL_LBR_RIP = 3,
	VTICE_VMCALL_LBR_SELECT = 4,
	VTICE_VMCALL_LBR_ENTRY = 16,
};

#define VTICE_VMCALL_EMIT_MAX	(1u << 20)	/* records per EMIT_TEST call */
#define VTICE_VMCALL_PONG	0x766963657479ull	/* "vticey" */
#define VTICE_VMCALL_SYSCALL_NUMBERS_ALL	8
#define VTICE_VMCALL_SYSCALLS_ON	1
/* With ON: trap, but record no event; the path tracer records its own call. */
#define VTICE_VMCALL_SYSCALLS_QUIET	2

#define VTICE_VMCALL_OK		0
#define VTICE_VMCALL_EINVAL	(-22)
#define VTICE_VMCALL_ENOSYS	(-38)
#define VTICE_VMCALL_EBUSY	(-16)

#endif /* VTICE_UAPI_VMCALL_H */
