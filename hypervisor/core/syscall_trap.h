/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Syscall events from VMX root, with no change to kernel text and no use of
 * the kernel's tracepoints (docs/tracing.md, "Syscall events").
 *
 * While the trap is armed on a CPU, the guest's EFER.SCE is clear in the
 * EFER that VM entry loads, so SYSCALL and SYSRET raise #UD (SDM Vol. 2B,
 * SYSCALL and SYSRET: "IF IA32_EFER.SCE = 0 THEN #UD"). The #UD exits; the
 * hypervisor records the event and executes the instruction itself. Every
 * syscall that returns with SYSRET therefore costs two exits; one that
 * returns with IRET (execve, rt_sigreturn, a signal delivered on the way
 * out, a new task's first return) costs one and has no exit event. The
 * guest reads and writes its own SCE through an EFER shadow.
 *
 *  - syscall_emul.c: the two instructions, to the SDM;
 *  - syscall_trap.c: arming, the #UD exit, the EFER shadow;
 *  - syscall_events.c: the task filter and the records.
 */
#ifndef VT_CORE_SYSCALL_TRAP_H
#define VT_CORE_SYSCALL_TRAP_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vt_exit;
struct vt_fetch_program;
struct vt_fetch_totals;
struct vt_hv;
struct vt_vcpu;
struct vt_guest_regs;
struct vtice_record;

/* ---- syscall_emul.c ---- */
enum vt_sys_kind {
	VT_SYS_OTHER,		/* not SYSCALL or SYSRET: the #UD is the guest's */
	VT_SYS_SYSCALL,		/* 0f 05 */
	VT_SYS_SYSRET,		/* 0f 07; with REX.W it returns to 64-bit mode */
};

struct vt_sys_insn {
	enum vt_sys_kind kind;
	u32 len;
	bool rex_w;
};

/*
 * Decode the n bytes at the faulting RIP (64-bit mode): prefixes, then the
 * opcode. A LOCK prefix makes either instruction #UD on its own, so it is
 * reported as OTHER.
 */
void vt_sys_decode(const u8 *bytes, u32 n, struct vt_sys_insn *out);
/* Execute SYSCALL for the guest (CS.L = 1 and EFER.LMA = 1 checked by the caller). */
void vt_emulate_syscall(struct vt_exit *exit, u32 len);
/* Execute SYSRET; false when it faulted instead (#GP(0) injected). */
bool vt_emulate_sysret(struct vt_exit *exit, bool rex_w);

/* ---- syscall_trap.c ---- */
/* VTICE_VMCALL_SYSCALL_STRINGS's slots: RDX and R8, four 16-bit ones each. */
#define VT_SYS_STRING_SLOTS	8

/* The filter an arming VMCALL carries (include/uapi/vtice/vmcall.h). */
struct vt_sys_filter {
	u32 pid;		/* matches a task's pid or tgid; 0 = any */
	char comm[16];		/* the task's comm, NUL-padded; "" = any */
};

/* Where task_struct keeps what the records carry (offsets, from the OS layer). */
struct vt_task_layout {
	u32 pid, tgid, comm;
	u32 stack;	/* of the pointer to the task's kernel stack */
	u32 orig_ax;	/* from that stack's base: its pt_regs' orig_ax, the syscall's number */
	bool known;
};

/* VTICE_VMCALL_SYSCALL_NUMBERS's set: syscalls 0..511, a bit each. */
#define VT_SYS_NR_WORDS	8

/* Which syscalls' events are recorded: every one, or those in bits. */
struct vt_sys_numbers {
	u64 bits[VT_SYS_NR_WORDS];
	bool chosen;	/* false: every syscall */
};

/* Per vCPU. */
struct vt_sys_vcpu {
	bool armed;		/* EFER.SCE is clear in the VMCS, #UD exits */
	bool guest_sce;		/* the SCE the guest believes it set */
	bool quiet;		/* armed for a callback only: no event recorded */
	u64 current_task;	/* gva of this CPU's current-task pointer, 0 = unknown */
	u32 stub_seen;		/* the stub's arming (struct vt_sys_stub) this CPU applied */
	bool by_stub;		/* armed, if it is, by the stub (until the kernel side's VMCALL) */
};

/*
 * The trap the debug stub arms (syscall: probes through it,
 * debug/rsp_probes.c): set while every CPU is parked, applied by each CPU
 * at its next VM entry from the stop, since only the CPU that owns a VMCS
 * can write it. While on, the kernel side's VMCALLs are refused (busy).
 */
struct vt_sys_stub {
	u32 gen;		/* bumped by each change */
	bool on;
};

/* What the stub arms its trap with (QVtice:syscalls:arm). */
struct vt_sys_stub_arm {
	struct vt_sys_filter filter;
	u64 strings[2];			/* VTICE_VMCALL_SYSCALL_STRINGS's RDX and R8 */
	struct vt_sys_numbers numbers;	/* the syscalls recorded (chosen false: all) */
};

/*
 * The VMCALL: arm (with the filter) or disarm this CPU. A quiet trap
 * records nothing itself; the syscall callback (hv.h) sees every call.
 */
int vt_syscall_trap_set(struct vt_vcpu *vcpu, bool on, bool quiet,
			const struct vt_sys_filter *filter);
/* The trap can be armed on a CPU whose guest runs with guest_cr4 (entry controls, CET). */
bool vt_syscall_trap_can_arm(const struct vt_hv *hv, u64 guest_cr4);
/*
 * The stub's trap, with every CPU parked: on as arm says, or off (NULL).
 * The caller has checked that the kernel side's trap is not armed on any CPU.
 */
int vt_syscall_trap_stub_set(struct vt_hv *hv, const struct vt_sys_stub_arm *arm);
/* On leaving a stop: arm or disarm this CPU as the stub last asked. */
void vt_syscall_trap_stub_sync(struct vt_vcpu *vcpu);
/*
 * This CPU's trap is the kernel side's (VTICE_VMCALL_SYSCALLS), which the
 * stub must leave alone; a stub's trap that an off has not reached yet
 * (the CPU still parked) is not.
 */
bool vt_syscall_trap_kernel_armed(const struct vt_vcpu *vcpu);
/* A #UD exit while armed: true when it was SYSCALL or SYSRET and was executed. */
bool vt_syscall_trap_on_ud(struct vt_exit *exit);
/* EFER as the guest sees it, from the value in the VMCS. */
u64 vt_syscall_guest_efer(const struct vt_vcpu *vcpu, u64 vmcs_efer);
/* RDMSR/WRMSR of EFER while armed (the MSR bitmap sends them here). */
u64 vt_syscall_read_efer(const struct vt_vcpu *vcpu);
bool vt_syscall_write_efer(struct vt_vcpu *vcpu, u64 value);

/* ---- syscall_events.c ---- */
enum vt_sys_edge {
	VT_SYS_ENTER,
	VT_SYS_EXIT,
};

/* VTICE_VMCALL_SYSCALL_STRINGS: which entries copy a string, for every CPU. */
u64 vt_syscall_strings_set(struct vt_hv *hv, u64 rdx, u64 r8);
/* VTICE_VMCALL_SYSCALL_NUMBERS: which syscalls are recorded, for every CPU. */
u64 vt_syscall_numbers_set(struct vt_hv *hv, u64 word, u64 bits);
/* Record one event on the vCPU's ring if its task passes the filter. */
void vt_syscall_event(struct vt_vcpu *vcpu, const struct vt_guest_regs *regs,
		      enum vt_sys_edge edge);
/* The task current on the vCPU (*task) passes the armed filter. */
bool vt_syscall_task_passes(const struct vt_vcpu *vcpu, u64 *task);
/* What a probe's hit copies besides the arguments and the task. */
struct vt_probe_capture {
	u32 stack_bytes;	/* of the stack from RSP up; 0 = none */
	const struct vt_fetch_program *fetch;	/* run at the hit (probe_fetch.h); NULL = none */
	struct vt_fetch_totals *totals;	/* what the program's COUNT, SUM, MIN, MAX or HIST counts into; NULL = none */
	u64 *passed_over;	/* what a hit the filter or a KEEP passes over adds 1 to; NULL = none */
	bool more_regs;		/* the GPRS records: RBX, RSP, RBP, R10-R15, RFLAGS */
	/* A watch probe's hit (records.h): VTICE_PROBE_HIT_READ/WRITE; 0 = not one */
	u32 watch_access;
	u64 watch_ip, watch_addr;	/* the accessing instruction, the watched byte */
};

/*
 * A probe at addr fired (debug/probe_points.h): one PROBE_HIT group
 * (records.h) with the function's six arguments and what cap asks for,
 * if the task passes filter. True when it was recorded.
 */
bool vt_probe_event(struct vt_vcpu *vcpu, const struct vt_guest_regs *regs, u64 addr,
		    const struct vt_sys_filter *filter, const struct vt_probe_capture *cap);
/* A group's DATA record of kind with a and b, stamped as its head. */
void vt_put_data(struct vtice_record *rec, const struct vtice_record *head, u32 kind, u64 a, u64 b);
/* A function's argument i (0..5) in the System V order: RDI, RSI, RDX, RCX, R8, R9. */
u64 vt_call_arg(const struct vt_guest_regs *r, u32 i);
/* The STRING records (records.h) of the string at gva, as far as it is mapped: the new n. */
u32 vt_put_string(const struct vt_vcpu *vcpu, u64 gva, struct vtice_record *recs, u32 n);
/*
 * TASK and COMM of the task current on the vCPU at recs[n], when it can be
 * read: the new n; 0 when the task does not pass filter (a task that
 * cannot be read passes only an empty one).
 */
u32 vt_put_current_task(const struct vt_vcpu *vcpu, const struct vt_sys_filter *filter,
			struct vtice_record *recs, u32 n);

#ifdef __cplusplus
}
#endif

#endif /* VT_CORE_SYSCALL_TRAP_H */
