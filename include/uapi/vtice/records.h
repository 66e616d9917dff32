/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * vtice record format: what the hypervisor writes into its per-CPU rings,
 * what trace files carry, and what the btf-trace decoder reads.
 *
 * Every record is 32 bytes, fixed width, little endian. A producer never
 * writes a partial record; a consumer that sees an unknown type skips it.
 * Shared unchanged by the kernel module (C) and user space (C++).
 */
#ifndef VTICE_UAPI_RECORDS_H
#define VTICE_UAPI_RECORDS_H

#include <linux/types.h>

#define VTICE_RECORD_VERSION 1

enum vtice_record_type {
	VTICE_REC_INVALID = 0,
	VTICE_REC_BRANCH = 1,		/* a taken branch: from -> to */
	VTICE_REC_SYSCALL_ENTER = 2,	/* syscall.nr, syscall.arg = first argument */
	VTICE_REC_SYSCALL_EXIT = 3,	/* syscall.nr (VTICE_SYSCALL_NR_UNKNOWN), syscall.arg = return value */
	VTICE_REC_BREAKPOINT = 4,	/* bp.ip hit with bp.sp */
	VTICE_REC_LBR_SNAPSHOT = 5,	/* lbr.count branch records follow */
	VTICE_REC_LOST = 6,		/* lost.count records were dropped here (0: how many is unknown) */
	VTICE_REC_TEST = 7,		/* emitted on request through VMCALL */
	VTICE_REC_SYSCALL_DATA = 8,	/* more of the SYSCALL_ENTER/EXIT before it: see below */
	VTICE_REC_TRACE_STOP = 9,	/* a syscall-path trace ended: see below */
	VTICE_REC_PROBE_HIT = 10,	/* a fn:, addr: or watch: probe fired: see below */
	VTICE_REC_PROFILE_SAMPLE = 11,	/* the profiler's sample of a CPU: see below */
	VTICE_REC_STEP = 12,		/* a recorded step (replay): see below */
	VTICE_REC_STEP_REGS = 13,	/* ...the registers it changed */
	VTICE_REC_STEP_MEM = 14,	/* ...memory it read or wrote */
	VTICE_REC_TYPE_COUNT
};

/* vtice_record.flags for VTICE_REC_BRANCH */
#define VTICE_BRANCH_FROM_BTF		(1u << 0) /* single-step on branch #DB */
#define VTICE_BRANCH_FROM_LBR		(1u << 1) /* part of an LBR snapshot */
#define VTICE_BRANCH_FROM_STEP		(1u << 2) /* MTF or RSP block stepping */
#define VTICE_BRANCH_ASYNC		(1u << 3) /* interrupt/exception entry, not an instruction's branch */
#define VTICE_BRANCH_TASK_SWITCH	(1u << 4) /* the task changed at this branch */

/*
 * A syscall event is one group of records, stored whole or dropped whole:
 * the SYSCALL_ENTER or SYSCALL_EXIT record, whose flags give the number of
 * SYSCALL_DATA records right behind it, then those, each naming its
 * payload in flags:
 *   ENTER: ARGS12 (u.raw = arg1, arg2), ARGS34 (arg3, arg4), ARG5 (arg5, 0),
 *          TASK, COMM, and for a syscall armed to copy a string
 *          (vtice_syscalls.str_nr) its STRING records (below), when the
 *          argument points into user space
 *   EXIT:  TASK, COMM
 * TASK: u.raw[0] = pid | tgid << 32, u.raw[1] = the task_struct's address
 * (pairs an exit with its entry); COMM: the task's 16-byte comm, NUL-padded.
 * Without task information (unknown layout or unreadable task) TASK and
 * COMM are left out. An exit record does not know its syscall's number.
 */
#define VTICE_SYSCALL_DATA_ARGS12	1
#define VTICE_SYSCALL_DATA_ARGS34	2
#define VTICE_SYSCALL_DATA_ARG5		3
#define VTICE_SYSCALL_DATA_TASK		4
#define VTICE_SYSCALL_DATA_COMM		5
#define VTICE_SYSCALL_BASE_MAX		6	/* the head, ARGS12, ARGS34, ARG5, TASK, COMM */
#define VTICE_SYSCALL_NR_UNKNOWN	(~0ull)

/*
 * A probe hit (VTICE_IOC_PROBES) is a group like a syscall entry's: the
 * PROBE_HIT record (u.syscall.nr = the probe's address, u.syscall.arg =
 * RDI), then SYSCALL_DATA records ARGS12 (RSI, RDX), ARGS34 (RCX, R8),
 * ARG5 (R9, RAX), TASK and COMM: the six arguments of a function call in
 * the x86-64 System V order, RAX (the return value, at a probe on a
 * function's RET), and the running task. A probe armed with a fetch
 * program (vtice_probes.program, ioctl.h) adds its VALUE records (u.raw[0]
 * = the value, u.raw[1] = its slot | VTICE_PROBE_VALUE_UNREADABLE when a
 * read before it faulted), in the program's order, and its STRING records:
 * the bytes the string op's address points to, 16 a record, up to and with
 * the first NUL or VTICE_PROBE_STR_MAX bytes, as much as is mapped (none if
 * nothing is).
 * Probes armed with stack_bytes add REGS (u.raw[0] = RBP, u.raw[1] = RSP
 * at the entry) and the STACK records of a profile sample (below). Probes
 * armed with VTICE_PROBES_MORE_REGS add VTICE_GPRS_RECORDS GPRS records,
 * two registers each in this order: RBX, RSP, RBP, R10, R11, R12, R13,
 * R14, R15, RFLAGS (as they were at the hit). A
 * PROBE_HIT's flags are the number of DATA records behind it, at most
 * VTICE_PROBE_GROUP_MAX - 1 (flags & VTICE_PROFILE_COUNT_MASK).
 *
 * A watch probe's hit (vtice_probes.watch) is the same group taken after
 * the accessing instruction completed: u.syscall.nr = RIP then (where the
 * CPU goes on; REGS and the stack are from then too), the registers as
 * that instruction left them, and one WATCH record: u.raw[0] = the
 * accessing instruction's address, u.raw[1] = the first watched byte the
 * access touched. Its flags also carry VTICE_PROBE_HIT_READ and/or
 * VTICE_PROBE_HIT_WRITE: what the access did.
 */
#define VTICE_SYSCALL_DATA_WATCH	10
#define VTICE_SYSCALL_DATA_VALUE	11
#define VTICE_PROBE_VALUE_UNREADABLE	(1u << 8)
#define VTICE_PROBE_VALUES_MAX		4	/* slots 0..3: ioctl.h's VTICE_FETCH_VALUES_MAX */
#define VTICE_PROBE_HIT_READ		(1u << 16)
#define VTICE_PROBE_HIT_WRITE		(1u << 17)
#define VTICE_SYSCALL_DATA_STRING	8
#define VTICE_PROBE_STR_MAX		128
#define VTICE_STRING_RECORDS_MAX	(VTICE_PROBE_STR_MAX / 16)
/* Records in the largest syscall event: the base and a string. */
#define VTICE_SYSCALL_GROUP_MAX	(VTICE_SYSCALL_BASE_MAX + VTICE_STRING_RECORDS_MAX)
#define VTICE_SYSCALL_DATA_GPRS		9
#define VTICE_GPRS_RECORDS		5
/* A watch probe's hit runs no fetch program: its WATCH record fits in that room. */
#define VTICE_PROBE_GROUP_MAX	(VTICE_SYSCALL_BASE_MAX + VTICE_STRING_RECORDS_MAX + VTICE_PROBE_VALUES_MAX + \
				 VTICE_GPRS_RECORDS + 1 + VTICE_STACK_RECORDS_MAX)

/*
 * A profile sample (VTICE_IOC_PROFILE) is a group too: the PROFILE_SAMPLE
 * record (u.raw[0] = the guest's RIP, u.raw[1] = its RSP; flags = the
 * number of SYSCALL_DATA records behind it, VTICE_PROFILE_COUNT_MASK, with
 * the VTICE_PROFILE_* bits), then SYSCALL_DATA records: REGS (u.raw[0] =
 * RBP, u.raw[1] = 0), TASK and COMM as above, and for a sample in the
 * kernel the STACK records: the stack from RSP up, two words each, as much
 * of the request's stack_bytes as the stack's mapped pages hold: at most
 * VTICE_STACK_RECORDS_MAX (VTICE_PROFILE_STACK_MAX / 16, ioctl.h).
 */
#define VTICE_STACK_RECORDS_MAX		128
#define VTICE_SYSCALL_DATA_REGS		6
#define VTICE_SYSCALL_DATA_STACK	7
#define VTICE_PROFILE_COUNT_MASK	0xffffu
#define VTICE_PROFILE_USER		(1u << 16)	/* the CPU ran at CPL 3 */
#define VTICE_PROFILE_HALTED		(1u << 17)	/* ...or was halted (HLT, activity state) */

/*
 * A syscall-path trace (VTICE_IOC_PATH_TRACE) ends with one TRACE_STOP
 * record on the CPU where it ended: flags = why (below), u.raw[0] = the
 * traced task_struct's address, u.raw[1] = the task's instructions the
 * tracer stepped. Its stamp is on the same clock as the trace's BRANCH
 * records, which all come before it.
 */
#define VTICE_TRACE_STOP_SYSRET		1	/* the call returned through SYSRET */
#define VTICE_TRACE_STOP_USER		2	/* the task reached user mode another way (IRET) */
#define VTICE_TRACE_STOP_MAX_INSNS	3	/* the instruction budget ran out */
#define VTICE_TRACE_STOP_DISARMED	4	/* the trace was disarmed mid-call */

/*
 * A recorded trace (VTICE_PATH_RECORD, MTF only) gives every step of the
 * traced task in the kernel a group: the STEP record (u.raw[0] = the RIP
 * the step ran from, u.raw[1] = where it ended: the next instruction, a
 * branch's target, or the handler of an event delivered; equal for one
 * iteration of a REP string instruction), then the records of what the
 * step changed:
 *   STEP_REGS: flags = the number of registers (1 or 2) in bits 16-23,
 *              the first's number in bits 0-7 and the second's in 8-15
 *              (VTICE_STEP_REG_*), u.raw their new values.
 * After a gap (the trace's start, user code or another task between two
 * recorded steps), STEP_REGS records with every register come before the
 * STEP record: the registers as that step found them.
 *   STEP_MEM:  flags = VTICE_STEP_MEM_*: READ (u.raw[0] = the address,
 *              u.raw[1] = its 8 bytes: the explicit memory operand as the
 *              step found it, where it is RAM and mapped; whether the
 *              instruction reads it, LEA and NOP do not, is the reader's
 *              to decode), or a write's BEFORE then AFTER record (each
 *              u.raw[0] = the address, u.raw[1] = its 8 bytes before or
 *              after; a PUSH or CALL that stored the bytes its slot held
 *              already gives the slot so too), or for a step that ended in an IDT handler (an
 *              interrupt or exception delivered) FRAME records: the 48
 *              bytes from RSP up as the delivery left them, 8 a record,
 *              their old bytes unknown. Root reads 8 bytes at the operand, below RSP and
 *              at RDI (the CALL/PUSH and STOS/MOVS stores), and gives the
 *              windows the step changed: which bytes the instruction wrote,
 *              and wider stores (XSAVE, CMPXCHG16B, an exception frame),
 *              are the reader's to work out or to mark unknown.
 */
#define VTICE_STEP_REG_RAX		0	/* ... R15 = 15, in the ModRM order */
#define VTICE_STEP_REG_RSP		4
#define VTICE_STEP_REG_RFLAGS		16
#define VTICE_STEP_REG_FS_BASE		17
#define VTICE_STEP_REG_GS_BASE		18
#define VTICE_STEP_REGS			19
#define VTICE_STEP_REG_COUNT_SHIFT	16
#define VTICE_STEP_MEM_READ		0
#define VTICE_STEP_MEM_BEFORE		1
#define VTICE_STEP_MEM_AFTER		2
#define VTICE_STEP_MEM_FRAME		3
#define VTICE_STEP_FRAME_BYTES		48	/* SS, RSP, RFLAGS, CS, RIP and an error code */

struct vtice_record {
	__u16 type;	/* enum vtice_record_type */
	__u16 cpu;
	__u32 flags;
	__u64 tsc;	/* time stamp counter when the record was made */
	union {
		struct { __u64 from, to; } branch;
		struct { __u64 nr, arg; } syscall;
		struct { __u64 ip, sp; } bp;
		struct { __u64 count, tos; } lbr;
		struct { __u64 count, reserved; } lost;
		struct { __u64 value, sequence; } test;
		__u64 raw[2];
	} u;
};

#ifdef __cplusplus
static_assert(sizeof(struct vtice_record) == 32, "vtice_record is 32 bytes");
#else
_Static_assert(sizeof(struct vtice_record) == 32, "vtice_record is 32 bytes");
#endif

#endif /* VTICE_UAPI_RECORDS_H */
