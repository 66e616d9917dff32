/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * /dev/vtice ioctl ABI, shared unchanged by the kernel module (C) and user
 * space (C++).
 *
 * ABI for the rig / user space, in short:
 *  - /dev/vtice is a misc device, mode 0600 (root only).
 *  - Every ioctl argument struct starts with __u32 size (the caller's
 *    sizeof) and __u32 version (VTICE_ABI_VERSION). The module rejects a
 *    wrong version or a size smaller than it needs with -EINVAL; unknown
 *    ioctl numbers get -ENOTTY; bad pointers -EFAULT.
 *  - VTICE_IOC_STATUS: which CPUs are virtualized, ring geometry.
 *  - VTICE_IOC_CPU_STATS: VM-exit counts per basic exit reason for one CPU.
 *  - VTICE_IOC_CAPS: VMX features found and probed on this machine.
 *  - VTICE_IOC_EMIT_TEST: the module issues a VMCALL (with its per-load key)
 *    on the chosen CPU; the hypervisor writes `count` VTICE_REC_TEST records
 *    (u.test.value = value, u.test.sequence = 0, 1, ...) into that CPU's ring.
 *  - VTICE_IOC_SYSCALLS: arm or disarm syscall events on every CPU, or
 *    read their counters (see struct vtice_syscalls).
 *  - VTICE_IOC_LBR: one CPU's LBR support and its last-branch snapshot
 *    taken at a crash (see struct vtice_lbr).
 *  - VTICE_IOC_PATH_TRACE: trace the branches of the next calls of one
 *    syscall (see struct vtice_path_trace).
 *  - VTICE_IOC_PROBES, VTICE_IOC_PROFILE: probes at kernel functions and
 *    the sampling profiler (see their structs).
 *  - mmap(): CPU n's ring is at offset n * status.ring_mmap_size, length
 *    status.ring_mmap_size, read-only; see ring.h for the layout.
 *
 * Build: make -C hypervisor KDIR=/usr/src/linux-headers-<version>
 * Load:  insmod hypervisor/vtice.ko [virtualize=0] [ring_records=4096]
 *        (virtualize=0 creates /dev/vtice without entering VMX)
 * dmesg markers: "vtice: virtualized N of M CPUs" after a good load,
 * "vtice: bring-up failed" when it refuses to load (all CPUs rolled back),
 * "vtice: devirtualized, unloaded" on rmmod. The load also logs the raw
 * VMX capability MSRs ("vtice: VMX basic ...").
 */
#ifndef VTICE_UAPI_IOCTL_H
#define VTICE_UAPI_IOCTL_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define VTICE_ABI_VERSION	1
#define VTICE_DEVICE_NAME	"vtice"		/* /dev/vtice */
#define VTICE_IOC_MAGIC		0xE7

/* Highest CPU number the status masks can describe. */
#define VTICE_MAX_CPUS		1024
/* Exit-count slots: basic exit reasons 0..VTICE_EXIT_REASON_SLOTS-1. */
#define VTICE_EXIT_REASON_SLOTS	80

struct vtice_status {
	__u32 size;			/* in: sizeof(struct vtice_status) */
	__u32 version;			/* in: VTICE_ABI_VERSION */
	__u32 nr_cpu_ids;		/* out: highest possible CPU id + 1 */
	__u32 nr_virtualized;		/* out: CPUs running as guests now */
	__u32 ring_records;		/* out: records per ring (power of 2) */
	__u32 ring_mmap_size;		/* out: bytes per CPU in the mmap */
	__u64 key_loaded;		/* out: 1 once the module is up */
	__u64 total_exits;		/* out: all VM exits on all CPUs */
	__u64 virtualized[VTICE_MAX_CPUS / 64]; /* out: bit n = CPU n */
};

/* vtice_cpu_stats.flags */
#define VTICE_CPU_VIRTUALIZED	(1u << 0)

struct vtice_cpu_stats {
	__u32 size;			/* in */
	__u32 version;			/* in */
	__u32 cpu;			/* in: CPU number */
	__u32 flags;			/* out: VTICE_CPU_* */
	__u64 exits_total;		/* out */
	__u64 exits_unknown;		/* out: reasons >= VTICE_EXIT_REASON_SLOTS */
	__u64 exits[VTICE_EXIT_REASON_SLOTS]; /* out: by basic exit reason */
};

/* vtice_caps.flags */
#define VTICE_CAP_VMX			(1ull << 0)
#define VTICE_CAP_TRUE_CTLS		(1ull << 1)
#define VTICE_CAP_EPT			(1ull << 2)
#define VTICE_CAP_EPT_2M		(1ull << 3)
#define VTICE_CAP_EPT_1G		(1ull << 4)
#define VTICE_CAP_EPT_AD		(1ull << 5)
#define VTICE_CAP_EPT_EXEC_ONLY		(1ull << 6)
#define VTICE_CAP_INVEPT_SINGLE		(1ull << 7)
#define VTICE_CAP_VPID			(1ull << 8)
#define VTICE_CAP_MTF			(1ull << 9)
#define VTICE_CAP_PREEMPT_TIMER		(1ull << 10)
#define VTICE_CAP_UNRESTRICTED		(1ull << 11)
#define VTICE_CAP_DEBUGCTL_BTF		(1ull << 12) /* BTF reads back set */
#define VTICE_CAP_DEBUGCTL_LBR		(1ull << 13) /* LBR reads back set */
#define VTICE_CAP_MSR_BITMAP		(1ull << 14)
#define VTICE_CAP_PERF_GLOBAL		(1ull << 15) /* IA32_PERF_GLOBAL_CTRL reads */
#define VTICE_CAP_CET			(1ull << 16) /* IA32_S_CET reads */

struct vtice_caps {
	__u32 size;			/* in */
	__u32 version;			/* in */
	__u64 flags;			/* out: VTICE_CAP_* */
	__u64 vmx_basic;		/* out: raw IA32_VMX_BASIC */
	__u64 pinbased_ctls;		/* out: raw (TRUE_) control MSRs */
	__u64 procbased_ctls;
	__u64 procbased_ctls2;
	__u64 exit_ctls;
	__u64 entry_ctls;
	__u64 misc;			/* IA32_VMX_MISC */
	__u64 ept_vpid_cap;		/* IA32_VMX_EPT_VPID_CAP */
	__u32 preempt_timer_shift;	/* TSC bit that ticks the timer */
	__u32 reserved;
};

#define VTICE_EMIT_TEST_MAX	(1u << 20)

struct vtice_emit_test {
	__u32 size;			/* in */
	__u32 version;			/* in */
	__u32 cpu;			/* in: target CPU */
	__u32 count;			/* in: records, 1..VTICE_EMIT_TEST_MAX */
	__u64 value;			/* in: copied into u.test.value */
	__u64 written;			/* out: records stored in the ring */
	__u64 dropped;			/* out: records lost to a full ring */
};

/*
 * Stop every CPU for the hypervisor's debug stub (module parameter
 * debug_port), as a 0x03 on its line would. Returns once the debugger has
 * resumed the machine; -ENODEV when no stub is configured.
 */
struct vtice_break {
	__u32 size;			/* in: sizeof(struct vtice_break) */
	__u32 version;			/* in: VTICE_ABI_VERSION */
	__u64 stopped_ns;		/* out: how long the machine stayed stopped */
};

/*
 * Syscall events (docs/tracing.md): the hypervisor records every SYSCALL
 * entry and SYSRET exit of the tasks that pass the filter into the CPU's
 * ring (records.h). One open file owns them at a time: ARM from another
 * file gets -EBUSY, and closing the owner's file disarms every CPU.
 * -EOPNOTSUPP when no CPU could arm (no "load IA32_EFER" VM-entry control,
 * or CET enabled in CR4); CPUs that come online later are not armed.
 */
#define VTICE_SYSCALL_STRINGS_MAX	8
#define VTICE_SYSCALL_STRING_NR_LIMIT	4096
#define VTICE_SYSCALL_NR_WORDS		8	/* nrs[]: syscalls 0..511 */
/* Only nrs[]'s syscalls are recorded (else every one). */
#define VTICE_SYSCALLS_CHOSEN		(1u << 0)

enum vtice_syscalls_op {
	VTICE_SYSCALLS_QUERY = 0,	/* counters only */
	VTICE_SYSCALLS_ARM = 1,
	VTICE_SYSCALLS_DISARM = 2,
};

struct vtice_syscalls {
	__u32 size;			/* in */
	__u32 version;			/* in */
	__u32 op;			/* in: enum vtice_syscalls_op */
	__u32 pid;			/* in (ARM): a task's pid or tgid; 0 = any */
	char comm[16];			/* in (ARM): the task's comm, NUL-padded; "" = any */
	__u32 cpus_armed;		/* out: CPUs armed after the call */
	__u32 cpus_failed;		/* out (ARM): online CPUs that could not arm */
	__u64 seen;			/* out: SYSCALL/SYSRET the hypervisor executed, all CPUs, since load */
	__u64 recorded;			/* out: events that passed the filter and fit in a ring */
	/*
	 * in (ARM): syscalls whose entry events copy a user string (records.h,
	 * STRING): per slot, the number (below VTICE_SYSCALL_STRING_NR_LIMIT)
	 * and 0 (slot unused) or N (1..VTICE_PROBE_ARGS): the string argument
	 * N - 1 points to. A number in two slots, or a bad one, is -EINVAL.
	 */
	__u16 str_nr[VTICE_SYSCALL_STRINGS_MAX];
	__u8 str_arg[VTICE_SYSCALL_STRINGS_MAX];
	__u32 flags;			/* in (ARM): VTICE_SYSCALLS_* below; other bits 0 */
	__u32 reserved;			/* 0 */
	/*
	 * in (ARM, with VTICE_SYSCALLS_CHOSEN): the syscalls whose events are
	 * recorded, bit b of word w for syscall 64w + b; the others' cost
	 * their exits only. An exit is judged by the number its entry saved
	 * (pt_regs->orig_ax); one whose number cannot be read is recorded.
	 */
	__u64 nrs[VTICE_SYSCALL_NR_WORDS];
};

/*
 * Syscall-path trace (docs/tracing.md, local mode): the hypervisor waits
 * for the next call of syscall `nr` by a task that passes the filter,
 * records every taken branch that task runs in the kernel from its SYSCALL
 * to its return (on whichever CPU it runs), and ends the call with a
 * VTICE_REC_TRACE_STOP record (records.h). Records go through the per-CPU
 * rings. The syscall trap behind it is the one VTICE_IOC_SYSCALLS arms:
 * one open file owns either at a time (-EBUSY), and closing it disarms.
 * -EOPNOTSUPP: no CPU can trap syscalls, or no tracer (no monitor trap
 * flag). The calls' records: the SYSCALL_ENTER group, a BRANCH from the
 * SYSCALL (a user address) to the kernel's entry, the kernel's branches,
 * then for a SYSRET its BRANCH and the SYSCALL_EXIT group, then TRACE_STOP.
 */
enum vtice_path_trace_op {
	VTICE_PATH_QUERY = 0,		/* counters only */
	VTICE_PATH_ARM = 1,
	VTICE_PATH_DISARM = 2,
};

#define VTICE_PATH_MAX_CALLS	1000000
#define VTICE_PATH_MAX_INSNS	(1ull << 40)

/* vtice_path_trace.mechanism (docs/tracing.md) */
#define VTICE_TRACE_MTF		1	/* one exit per instruction, branches by decoding */
#define VTICE_TRACE_TF		2	/* TF steps: one #DB per instruction, hidden from the guest */
#define VTICE_TRACE_BTF		3	/* TF + DEBUGCTL.BTF: one #DB per taken branch */

struct vtice_path_trace {
	__u32 size;			/* in */
	__u32 version;			/* in */
	__u32 op;			/* in: enum vtice_path_trace_op */
	__u32 pid;			/* in (ARM): a task's pid or tgid; 0 = any */
	char comm[16];			/* in (ARM): the task's comm, NUL-padded; "" = any */
	__u32 nr;			/* in (ARM): the syscall number (x86-64) */
	__u32 calls;			/* in (ARM): calls to trace, 1..VTICE_PATH_MAX_CALLS */
	__u64 max_insns;		/* in (ARM): instructions per call, 1..VTICE_PATH_MAX_INSNS */
	__u32 cpus_armed;		/* out */
	__u32 cpus_failed;		/* out (ARM): online CPUs that could not arm */
	__u32 mechanism;		/* out: VTICE_TRACE_* */
	__u32 traced;			/* out: calls traced to their end since ARM */
	/*
	 * in (ARM): __switch_to's address (/proc/kallsyms), or 0. With it the
	 * module plants the switch trigger, and a call's CPUs are stepped only
	 * while its task runs on them; without it, or where the module does not
	 * recognize the function, every CPU is stepped while a call is traced.
	 */
	__u64 switch_to;
	__u32 stepping;			/* out (ARM): enum vtice_path_stepping */
	__u32 flags;			/* in (ARM): VTICE_PATH_RECORD or 0 */
};

/*
 * A recorded trace: each step also gives the registers it changed and the
 * memory it read and wrote (records.h, VTICE_REC_STEP), for replay. MTF
 * only: -EINVAL where the tracer steps with TF.
 */
#define VTICE_PATH_RECORD	(1u << 0)

enum vtice_path_stepping {
	VTICE_PATH_STEP_ALL_CPUS = 0,	/* no switch trigger: every CPU, the filter drops the rest */
	VTICE_PATH_STEP_TASK = 1,	/* only where the traced task is current */
};

/*
 * LBR snapshots at a crash (docs/lbr.md): where the CPU honours
 * IA32_DEBUGCTL.LBR, the hypervisor keeps the last-branch stack recording
 * in the guest and, when the debug stub notices an oops, a panic, a triple
 * fault or a hard lockup, saves each CPU's stack (frozen by the VM exit)
 * in memory only VMX root uses. One CPU per call; status says plainly why
 * a CPU has none. -EINVAL: bad size/version or cpu >= nr_cpu_ids.
 */
#define VTICE_LBR_MAX		32	/* pairs per CPU: the deepest model stack handled */

enum vtice_lbr_status {
	VTICE_LBR_OK = 0,		/* recording; see event for a snapshot */
	VTICE_LBR_NO_DEBUGCTL = 1,	/* DEBUGCTL.LBR does not stick (emulators: Bochs, TCG) */
	VTICE_LBR_NOT_INTEL = 2,	/* not a GenuineIntel CPU */
	VTICE_LBR_UNKNOWN_MODEL = 3,	/* family/model whose LBR MSRs vtice does not know */
	VTICE_LBR_ARCH_ONLY = 4,	/* architectural LBR (CPUID 7:EDX[19]); not implemented */
	VTICE_LBR_NO_STUB = 5,		/* supported, but snapshots need the debug stub (debug_port) */
	VTICE_LBR_OFFLINE = 6,		/* that CPU is not virtualized */
};

enum vtice_lbr_event {
	VTICE_LBR_EV_NONE = 0,		/* no snapshot yet */
	VTICE_LBR_EV_OOPS = 1,		/* the crash guard on __die */
	VTICE_LBR_EV_PANIC = 2,		/* the crash guard on panic */
	VTICE_LBR_EV_TRIPLE_FAULT = 3,
	VTICE_LBR_EV_LOCKUP = 4,	/* the stub's hard-lockup watch */
	VTICE_LBR_EV_PARKED = 5,	/* stopped by the all-stop while another CPU crashed */
};

/* vtice_lbr_entry.flags, from FROM_IP's upper bits or MSR_LBR_INFO_x */
#define VTICE_LBR_MISPRED	(1u << 0)
#define VTICE_LBR_IN_TSX	(1u << 1)
#define VTICE_LBR_TSX_ABORT	(1u << 2)
#define VTICE_LBR_CYCLES	(1u << 3)	/* cycles is valid */

/* vtice_lbr.flags */
#define VTICE_LBR_GUEST_OWNED	(1u << 0)	/* the kernel had LBR on itself (perf): its filter applied */
#define VTICE_LBR_SELECT_VALID	(1u << 1)	/* lbr_select holds MSR_LBR_SELECT */

#define VTICE_LBR_FMT_NONE	0xffu		/* no IA32_PERF_CAPABILITIES */

struct vtice_lbr_entry {
	__u64 from;			/* canonical address, flag bits removed */
	__u64 to;
	__u32 flags;			/* VTICE_LBR_MISPRED... */
	__u32 cycles;			/* core clocks since the previous entry (saturating) */
};

struct vtice_lbr {
	__u32 size;			/* in */
	__u32 version;			/* in */
	__u32 cpu;			/* in */
	__u32 status;			/* out: enum vtice_lbr_status */
	__u32 entries;			/* out: the model's LBR stack depth, 0 without LBR */
	__u32 format;			/* out: IA32_PERF_CAPABILITIES[5:0], or VTICE_LBR_FMT_NONE */
	__u32 arch_depth;		/* out: architectural LBR depth (CPUID 0x1C), 0 = none */
	__u32 model;			/* out: DisplayFamily << 8 | DisplayModel */
	__u32 event;			/* out: enum vtice_lbr_event of the last snapshot */
	__u32 count;			/* out: valid pairs in br[], oldest first */
	__u32 flags;			/* out: VTICE_LBR_GUEST_OWNED... */
	__u32 snapshots;		/* out: snapshots taken on this CPU since load */
	__u64 tsc;			/* out: TSC when the snapshot was taken */
	__u64 rip;			/* out: guest RIP at the exit that froze the stack */
	__u64 lbr_select;		/* out: MSR_LBR_SELECT then (a filter: branches left out) */
	struct vtice_lbr_entry br[VTICE_LBR_MAX];
};

/*
 * Probes at kernel function entries (docs/probes.md, `vtice probe`): each
 * address gets a hidden breakpoint (an EPT split view, the kernel's bytes
 * unchanged); a hit by a task that passes the filter writes a
 * VTICE_REC_PROBE_HIT group (records.h) to the CPU's ring and the CPU goes
 * on, never stopped. An address must be in the kernel's core text, at a
 * symbol's start or 4 bytes in (past an ENDBR64). One open file owns the
 * probes (-EBUSY for another); its close removes them. -EOPNOTSUPP: no
 * execute-only EPT. ARM replaces whatever the owner armed before.
 */
#define VTICE_PROBES_MAX	64
/* A probed function's arguments: the System V registers RDI, RSI, RDX, RCX, R8, R9. */
#define VTICE_PROBE_ARGS	6

/* Each hit also copies RBX, RSP, RBP, R10-R15 and RFLAGS (records.h, GPRS). */
#define VTICE_PROBES_MORE_REGS	(1u << 0)

/*
 * Watch probes (`watch:w:ADDR:LEN`): the pages a range covers lose write
 * (or read and write) in the EPT; an access to the range is completed
 * under MTF and recorded as a PROBE_HIT group (records.h), and the CPU goes
 * on. Accesses to the pages' other bytes cost the same exits unrecorded.
 * The range is kernel memory mapped now (-EINVAL otherwise), never the
 * hypervisor's own (-EACCES), nor a page holding a hidden breakpoint
 * (-EBUSY). -EOPNOTSUPP: no MTF. A CPU caching the old rights may miss
 * hits until ARM returns (every CPU flushes before it does).
 */
#define VTICE_PROBE_WATCHES_MAX	4
#define VTICE_PROBE_WATCH_LEN_MAX	4096

enum vtice_probe_watch_type {
	VTICE_PROBE_WATCH_WRITE = 1,
	VTICE_PROBE_WATCH_READ = 2,
	VTICE_PROBE_WATCH_ACCESS = 3,	/* read or write */
};

struct vtice_probe_watch {
	__u64 addr;	/* kernel linear address */
	__u32 len;	/* 1..VTICE_PROBE_WATCH_LEN_MAX */
	__u32 type;	/* enum vtice_probe_watch_type */
};

/*
 * A fetch program (docs/probes.md, "Reading through an argument"): what a
 * probe's hit reads of guest memory beyond its registers, for
 * `args->how->flags`, `((struct file *)arg0)->f_path.dentry` and str().
 * Straight-line code, no jumps: at most VTICE_FETCH_OPS_MAX ops run, each
 * once, on one 64-bit accumulator. ARG sets it to an argument (the System V
 * order, vtice_probes), RETVAL to RAX (a function's return value, at a
 * probe on its RET), CURTASK to the address of the task_struct the CPU
 * runs (the one the comm/pid filter reads; 0 and unreadable when root
 * could not read it), REG to a general register (arg: enum
 * vtice_fetch_reg; RSP as it is at the hit). ADD adds imm, LOAD replaces
 * it with the 1, 2, 4 or 8 bytes at it (zero-extended; read as the guest
 * would, through its page tables, never the hypervisor's own memory),
 * INDEX adds a register times imm (an element's size, 1..2^31 - 1: a
 * computed index, a[arg2]; arg below), KEEP ends the hit unrecorded
 * unless the accumulator, cut to a width as INDEX's register is, compares
 * to imm (sign-extended) as arg says (a predicate, /arg2 > 4096/, in
 * root), VALUE writes it as the hit's VALUE record of slot arg (records.h),
 * STRING writes the string at it (STRING records), COUNT ends the hit
 * counted at its address (vtice_probes.counted) and unrecorded: an
 * aggregation done in root, for `@n = count()`; SUM does the same and
 * adds the accumulator, cut to a width as KEEP's is (arg's bits 4-6; bits
 * 0-3 are 0), to the address's sum (vtice_probes.summed), for
 * `@b = sum(arg2)`; MIN and MAX do the same and keep the least or the
 * greatest accumulator, so cut and compared as signed 64-bit numbers, in
 * vtice_probes.summed instead (for `@lo = min(arg2)`; while none was
 * counted it holds INT64_MAX or INT64_MIN); HIST does the same and adds 1
 * to the accumulator's power-of-two bucket, so cut and signed, among the
 * address's VTICE_FETCH_HIST_BUCKETS (VTICE_IOC_PROBE_HIST), for
 * `@h = hist(arg2)`; LHIST does the same with linear buckets, for
 * `@l = lhist(arg2, 0, 4096, 512)`; KEYED counts the hit under a key, in
 * the address's first slot (of VTICE_FETCH_KEYED_SLOTS) that holds that
 * key or, when none does, in a free one (VTICE_IOC_PROBE_KEYS), for
 * `@[comm] = count()`: arg's bits 0-3 say what the key is (enum
 * vtice_fetch_key; the accumulator cut to the width in bits 4-6, or the
 * task's comm, pid or tid, or the CPU); with a key of the task's or the
 * CPU's, imm SUM, MIN or MAX also keeps the accumulator, cut to that
 * width, in the slot as those ops keep it at an address (for
 * `@bytes[comm] = sum(arg2)`). KEY sets the accumulator, cut to its
 * width, aside as a word of the key, so that a key may be a value beside
 * another value or the task's: with the key VALUE, one KEY's word is the
 * key of a KEYED with an imm (ARG 3, KEY, ARG 2, KEYED VALUE SUM for
 * `@bytes[arg3] = sum(arg2)`) and two KEYs' are its two words, imm or
 * not (`@[arg0, arg1] = count()`); with the task's pid or tid or the CPU,
 * one KEY's word is the key's second (`@[pid, arg2] = count()`); a comm
 * fills both words and takes no KEY; with every slot taken by other keys, or the task
 * unreadable for a key of the task's, the hit is recorded instead, as if
 * the program had no KEYED (so no count is lost), with the VALUE records
 * its program wrote before the KEYED (a key read through an argument
 * comes so: ..., VALUE, KEYED, and the record carries it). A LOAD that faults
 * leaves 0 and marks the VALUE records until the next ARG, RETVAL, CURTASK
 * or REG unreadable, and a STRING then copies nothing. Root refuses
 * (EINVAL) a program that does not start with ARG, RETVAL, CURTASK or REG,
 * names an argument, register, size, slot, width or comparison out of
 * range, indexes by an element size below 1, writes a slot twice or more
 * than one string, has ops after COUNT, SUM, MIN, MAX, HIST, LHIST or
 * KEYED, gives LHIST a width below 1, KEYED an imm other than SUM, MIN
 * or MAX (or one with the accumulator as its key and no KEY before it),
 * has a KEY that no KEYED ends, more than two, or a key it does not fit as
 * above, or has reserved bits
 * set (a base or imm on an op that takes none);
 * END (0) or the last op ends it. A program may be COUNT alone, or KEYED
 * alone with a key that is not the accumulator and no imm.
 */
#define VTICE_FETCH_OPS_MAX	32
#define VTICE_FETCH_PROGRAMS_MAX	8
#define VTICE_FETCH_VALUES_MAX	4

enum vtice_fetch_code {
	VTICE_FETCH_END = 0,
	VTICE_FETCH_ARG = 1,	/* arg: 0..VTICE_PROBE_ARGS - 1 */
	VTICE_FETCH_ADD = 2,	/* imm */
	VTICE_FETCH_LOAD = 3,	/* arg: bytes, 1, 2, 4 or 8 */
	VTICE_FETCH_VALUE = 4,	/* arg: slot, 0..VTICE_FETCH_VALUES_MAX - 1 */
	VTICE_FETCH_STRING = 5,
	VTICE_FETCH_RETVAL = 6,
	VTICE_FETCH_CURTASK = 7,
	VTICE_FETCH_REG = 8,	/* arg: enum vtice_fetch_reg */
	VTICE_FETCH_INDEX = 9,	/* arg: VTICE_FETCH_INDEX_ARG(reg, width); imm: the element's size */
	VTICE_FETCH_KEEP = 10,	/* arg: VTICE_FETCH_INDEX_ARG(cmp, width); imm: what to compare with */
	VTICE_FETCH_COUNT = 11,	/* the last op: the hit is counted, not recorded */
	VTICE_FETCH_SUM = 12,	/* arg: VTICE_FETCH_INDEX_ARG(0, width); the last op: counted and summed */
	VTICE_FETCH_MIN = 13,	/* as SUM: counted, the least value kept */
	VTICE_FETCH_MAX = 14,	/* as SUM: counted, the greatest value kept */
	VTICE_FETCH_HIST = 15,	/* as SUM: counted into its power-of-two bucket */
	VTICE_FETCH_KEYED = 16,	/* arg: VTICE_FETCH_INDEX_ARG(enum vtice_fetch_key, width); counted by key;
				   imm: 0, or SUM, MIN or MAX: the key's slot also keeps the accumulator so */
	VTICE_FETCH_LHIST = 17,	/* as SUM: counted into its linear bucket (base: the first's low end;
				   imm: the buckets' width) */
	VTICE_FETCH_KEY = 18,	/* arg: VTICE_FETCH_INDEX_ARG(0, width); the accumulator so cut is a word of
				   the key of the KEYED that ends the program (at most two KEYs) */
};

/* What KEYED counts a hit under. */
enum vtice_fetch_key {
	VTICE_FETCH_KEY_VALUE = 0,	/* the accumulator, cut to KEYED's width as SUM's is */
	VTICE_FETCH_KEY_COMM = 1,	/* the task's comm: its 16 bytes, zero past the first NUL */
	VTICE_FETCH_KEY_PID = 2,	/* the task's process (tgid) */
	VTICE_FETCH_KEY_TID = 3,	/* the task's thread (the kernel's pid) */
	VTICE_FETCH_KEY_CPU = 4,	/* the CPU that hit */
	VTICE_FETCH_KEYS
};
#define VTICE_FETCH_KEYED_SLOTS	32

/*
 * HIST's buckets, as bpftrace's hist() draws them: 0 holds the values
 * below 0, 1 the value 0, and k (2..64) the values in [2^(k-2), 2^(k-1)).
 * LHIST's, with base B and width W (imm, above 0): 0 holds the values
 * below B, k (1..63) those in [B + (k-1)W, B + kW), and 64 the rest.
 */
#define VTICE_FETCH_HIST_BUCKETS	65

/* KEEP's comparison, signed: the hit is recorded when "acc CMP imm" holds. */
enum vtice_fetch_cmp {
	VTICE_FETCH_EQ, VTICE_FETCH_NE, VTICE_FETCH_LT, VTICE_FETCH_LE, VTICE_FETCH_GT, VTICE_FETCH_GE,
	VTICE_FETCH_CMPS
};

/*
 * INDEX's arg: the register that holds the index (enum vtice_fetch_reg) in
 * bits 0-3, and in bits 4-6 how much of it the index is: a 32-bit int
 * argument leaves bits 32-63 of its register undefined (System V ABI
 * 3.2.3), so they are cut off and the rest sign- or zero-extended first.
 */
enum vtice_fetch_index_width {
	VTICE_FETCH_INDEX_64 = 0,
	VTICE_FETCH_INDEX_S32, VTICE_FETCH_INDEX_U32,
	VTICE_FETCH_INDEX_S16, VTICE_FETCH_INDEX_U16,
	VTICE_FETCH_INDEX_S8, VTICE_FETCH_INDEX_U8,
	VTICE_FETCH_INDEX_WIDTHS
};
#define VTICE_FETCH_INDEX_ARG(reg, width)	((__u8)((reg) | (width) << 4))

enum vtice_fetch_reg {
	VTICE_FETCH_RDI, VTICE_FETCH_RSI, VTICE_FETCH_RDX, VTICE_FETCH_RCX, VTICE_FETCH_R8, VTICE_FETCH_R9,
	VTICE_FETCH_RAX, VTICE_FETCH_RBX, VTICE_FETCH_RSP, VTICE_FETCH_RBP, VTICE_FETCH_R10, VTICE_FETCH_R11,
	VTICE_FETCH_R12, VTICE_FETCH_R13, VTICE_FETCH_R14, VTICE_FETCH_R15,
	VTICE_FETCH_REGS
};

struct vtice_fetch_op {
	__u8 code;	/* enum vtice_fetch_code */
	__u8 arg;
	__s16 base;	/* LHIST's; 0 for the others */
	__s32 imm;	/* ADD's, INDEX's, KEEP's, LHIST's and KEYED's; 0 for the others */
};

enum vtice_probes_op {
	VTICE_PROBES_QUERY = 0,		/* counters only */
	VTICE_PROBES_ARM = 1,
	VTICE_PROBES_DISARM = 2,
};

struct vtice_probes {
	__u32 size;			/* in */
	__u32 version;			/* in */
	__u32 op;			/* in: enum vtice_probes_op */
	__u32 count;			/* in (ARM): addresses used, 1..VTICE_PROBES_MAX */
	__u32 pid;			/* in (ARM): a task's pid or tgid; 0 = any */
	char comm[16];			/* in (ARM): the task's comm, NUL-padded; "" = any */
	__u32 armed;			/* out: probe addresses and watch ranges armed */
	__u64 addrs[VTICE_PROBES_MAX];	/* in (ARM) */
	__u64 hits;			/* out: hits recorded since load */
	__u32 stack_bytes;		/* in (ARM): kernel stack per hit, as vtice_profile's (stack_points) */
	__u32 flags;			/* in (ARM): VTICE_PROBES_* below; other bits 0 */
	__u8 program[VTICE_PROBES_MAX];	/* in (ARM): per address, 0 or N (1..nr_programs): its hits run fetch[N - 1] */
	__u32 nr_watches;		/* in (ARM): watch[] used, 0..VTICE_PROBE_WATCHES_MAX */
	__u32 nr_programs;		/* in (ARM): fetch[] used, 0..VTICE_FETCH_PROGRAMS_MAX */
	struct vtice_probe_watch watch[VTICE_PROBE_WATCHES_MAX];	/* in (ARM) */
	struct vtice_fetch_op fetch[VTICE_FETCH_PROGRAMS_MAX][VTICE_FETCH_OPS_MAX];	/* in (ARM) */
	__u64 counted[VTICE_PROBES_MAX];	/* out (QUERY, DISARM): per address, hits COUNT or SUM counted since ARM */
	__s64 summed[VTICE_PROBES_MAX];	/* out (QUERY, DISARM): per address, what SUM added since ARM (wrapping) */
	__u64 passed_over;		/* out: hits the comm/pid filter or a KEEP did not record, since load */
	__u64 stack_points;		/* in (ARM): bit i: addrs[i]'s hits copy stack_bytes of stack */
	__u32 stack_watches;		/* in (ARM): bit i: watch[i]'s hits do; other bits 0 */
	__u32 reserved;			/* 0 */
	__u64 unreadable;		/* out (QUERY, DISARM): all addresses' counted hits' values a
					   LOAD found unmapped (they gave 0), since ARM */
};

/*
 * The sampling profiler (docs/profile.md, `vtice profile`): on each armed
 * CPU the VMX-preemption timer expires hz times per second of the CPU's
 * time in the guest, and each expiry writes a VTICE_REC_PROFILE_SAMPLE
 * group (records.h) to that CPU's ring; the CPU goes on. A halted CPU is
 * sampled as long as its timer counts (C0-C2: SDM 3C 26.5.1). With a pid
 * or comm, root writes only the samples of that task (`vtice probe
 * 'profile:hz:99 /comm == "dd"/ ...'`): the others cost their exit only. One open
 * file owns the profiler (-EBUSY for another); its close stops it. ARM
 * replaces what the owner armed before. -EOPNOTSUPP: no VMX-preemption
 * timer; -ENODEV: a CPU to sample is not virtualized.
 */
#define VTICE_PROFILE_HZ_MAX	10000
#define VTICE_PROFILE_STACK_MAX	2048
#define VTICE_PROFILE_ALL_CPUS	(-1)

enum vtice_profile_op {
	VTICE_PROFILE_QUERY = 0,	/* counters only */
	VTICE_PROFILE_ARM = 1,
	VTICE_PROFILE_DISARM = 2,
};

struct vtice_profile {
	__u32 size;			/* in */
	__u32 version;			/* in */
	__u32 op;			/* in: enum vtice_profile_op */
	__u32 hz;			/* in (ARM): 1..VTICE_PROFILE_HZ_MAX samples per second */
	__u32 stack_bytes;		/* in (ARM): kernel stack per sample, a multiple of 16, <= STACK_MAX */
	__s32 cpu;			/* in (ARM): the one CPU to sample, or VTICE_PROFILE_ALL_CPUS */
	__u32 armed;			/* out: CPUs sampling */
	__u32 pid;			/* in (ARM): only this task's samples (its pid or tgid); 0 = any */
	__u64 samples;			/* out: samples recorded since load, all CPUs */
	char comm[16];			/* in (ARM): only this comm's samples, NUL-padded; "" = any */
};

/*
 * What a HIST or LHIST op counted at one armed address (VTICE_IOC_PROBE_HIST): the
 * address's place in the ARM request in, its buckets out, as of the call.
 * Read it before DISARM, which takes the counts away with the probes.
 * -EINVAL: no address there; -EPERM: another open file armed the probes.
 */
struct vtice_probe_hist {
	__u32 size;		/* in */
	__u32 version;		/* in */
	__u32 index;		/* in: 0..count - 1 of the ARM request */
	__u32 reserved;		/* 0 */
	__u64 buckets[VTICE_FETCH_HIST_BUCKETS];	/* out: per bucket, hits HIST or LHIST counted since ARM */
};

/*
 * What a KEYED op counted at one armed address (VTICE_IOC_PROBE_KEYS): the
 * address's place in the ARM request in, its slots out, as of the call. A
 * slot's key never changes once it counts; one key may hold two slots
 * (two CPUs took a free slot for it at once): add them up. Read it before
 * DISARM. -EINVAL: no address there.
 */
struct vtice_probe_key {
	__u64 key[2];	/* a number in key[0] (key[1] 0), or a comm's 16 bytes */
	__u64 count;	/* hits counted under key since ARM; 0: the slot is free */
	__u64 value;	/* a KEYED with an imm: what its SUM added up, or its MIN or MAX kept */
};

struct vtice_probe_keys {
	__u32 size;		/* in */
	__u32 version;		/* in */
	__u32 index;		/* in: 0..count - 1 of the ARM request */
	__u32 reserved;		/* 0 */
	struct vtice_probe_key slots[VTICE_FETCH_KEYED_SLOTS];	/* out */
};

#define VTICE_IOC_STATUS	_IOWR(VTICE_IOC_MAGIC, 1, struct vtice_status)
#define VTICE_IOC_CPU_STATS	_IOWR(VTICE_IOC_MAGIC, 2, struct vtice_cpu_stats)
#define VTICE_IOC_CAPS		_IOWR(VTICE_IOC_MAGIC, 3, struct vtice_caps)
#define VTICE_IOC_EMIT_TEST	_IOWR(VTICE_IOC_MAGIC, 4, struct vtice_emit_test)
#define VTICE_IOC_BREAK		_IOWR(VTICE_IOC_MAGIC, 5, struct vtice_break)
#define VTICE_IOC_SYSCALLS	_IOWR(VTICE_IOC_MAGIC, 6, struct vtice_syscalls)
#define VTICE_IOC_PATH_TRACE	_IOWR(VTICE_IOC_MAGIC, 7, struct vtice_path_trace)
#define VTICE_IOC_LBR		_IOWR(VTICE_IOC_MAGIC, 8, struct vtice_lbr)
#define VTICE_IOC_PROBES	_IOWR(VTICE_IOC_MAGIC, 9, struct vtice_probes)
#define VTICE_IOC_PROFILE	_IOWR(VTICE_IOC_MAGIC, 10, struct vtice_profile)
#define VTICE_IOC_PROBE_HIST	_IOWR(VTICE_IOC_MAGIC, 11, struct vtice_probe_hist)
#define VTICE_IOC_PROBE_KEYS	_IOWR(VTICE_IOC_MAGIC, 12, struct vtice_probe_keys)

#ifdef __cplusplus
#define VTICE_UAPI_ASSERT(c, m) static_assert(c, m)
#else
#define VTICE_UAPI_ASSERT(c, m) _Static_assert(c, m)
#endif
VTICE_UAPI_ASSERT(sizeof(struct vtice_status) == 40 + VTICE_MAX_CPUS / 8, "vtice_status layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_cpu_stats) == 32 + 8 * VTICE_EXIT_REASON_SLOTS,
		  "vtice_cpu_stats layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_caps) == 88, "vtice_caps layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_emit_test) == 40, "vtice_emit_test layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_syscalls) == 88 + 8 * VTICE_SYSCALL_NR_WORDS, "vtice_syscalls layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_break) == 16, "vtice_break layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_path_trace) == 80, "vtice_path_trace layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_lbr_entry) == 24, "vtice_lbr_entry layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_lbr) == 72 + 24 * VTICE_LBR_MAX, "vtice_lbr layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_fetch_op) == 8, "vtice_fetch_op layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_probes) == 96 + 25 * VTICE_PROBES_MAX + 16 * VTICE_PROBE_WATCHES_MAX +
			  8 * VTICE_FETCH_PROGRAMS_MAX * VTICE_FETCH_OPS_MAX,
		  "vtice_probes layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_profile) == 56, "vtice_profile layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_probe_hist) == 16 + 8 * VTICE_FETCH_HIST_BUCKETS, "vtice_probe_hist layout");
VTICE_UAPI_ASSERT(sizeof(struct vtice_probe_keys) == 16 + 32 * VTICE_FETCH_KEYED_SLOTS, "vtice_probe_keys layout");

#endif /* VTICE_UAPI_IOCTL_H */
