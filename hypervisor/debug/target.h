/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seam between the RSP protocol engine (rsp_*.c, portable, knows no
 * VMX) and the machine it debugs. In the module, stub_target.c implements
 * these ops on top of the stopped vCPUs; in the unit tests and the fuzz
 * target a fake machine does. Every op is called from VMX root on the
 * master CPU while every CPU is stopped, and must not allocate or sleep.
 *
 * Threads are CPUs: gdb thread id = CPU index + 1 (gdb reserves 0 and -1).
 */
#ifndef VT_DEBUG_TARGET_H
#define VT_DEBUG_TARGET_H

#include "../core/syscall_trap.h"
#include "../core/types.h"
#include <vtice/records.h>

#ifdef __cplusplus
extern "C" {
#endif

/* GPRs in gdb's amd64 order (rax rbx rcx rdx rsi rdi rbp rsp r8..r15). */
enum vt_dbg_gpr {
	VT_DBG_RAX, VT_DBG_RBX, VT_DBG_RCX, VT_DBG_RDX, VT_DBG_RSI, VT_DBG_RDI,
	VT_DBG_RBP, VT_DBG_RSP, VT_DBG_R8, VT_DBG_R9, VT_DBG_R10, VT_DBG_R11,
	VT_DBG_R12, VT_DBG_R13, VT_DBG_R14, VT_DBG_R15, VT_DBG_GPR_COUNT
};

/* One stopped CPU's registers, as target.xml describes them. */
struct vt_dbg_regs {
	u64 gpr[VT_DBG_GPR_COUNT];
	u64 rip;
	u64 rflags;
	u64 cs, ss, ds, es, fs, gs;	/* selectors */
	u64 fs_base, gs_base, k_gs_base;
	u64 cr0, cr2, cr3, cr4, cr8, efer;
};

/* Z/z packet types (gdb's numbering). */
enum vt_dbg_point {
	VT_POINT_SW = 0,	/* Z0: hidden software breakpoint (EPT split view) */
	VT_POINT_HW = 1,	/* Z1: debug register */
	VT_POINT_WRITE = 2,	/* Z2 */
	VT_POINT_READ = 3,	/* Z3 */
	VT_POINT_ACCESS = 4,	/* Z4 */
};

/* Why the machine stopped: becomes the T packet's reason. */
enum vt_dbg_stop_reason {
	VT_STOP_SIGINT,		/* break-in (0x03, ioctl, connect, debug_wait) */
	VT_STOP_STEP,		/* a single step completed */
	VT_STOP_SWBREAK,
	VT_STOP_HWBREAK,
	VT_STOP_WATCH,		/* write watchpoint, data_addr valid */
	VT_STOP_RWATCH,
	VT_STOP_AWATCH,
	VT_STOP_CRASH,		/* the kernel panicked, oopsed or triple-faulted */
	VT_STOP_LOCKUP,		/* no timer interrupt could reach a CPU for lockup_secs */
};

struct vt_dbg_stop {
	u32 cpu;		/* the CPU that stopped first (0-based) */
	enum vt_dbg_stop_reason reason;
	u64 data_addr;		/* watchpoints: the address accessed */
};

/* What each CPU does when the machine resumes (vCont actions). */
enum vt_dbg_run {
	VT_RUN_CONTINUE,
	VT_RUN_STEP,
	VT_RUN_STAY,		/* stays parked (vCont without a default action) */
};

struct vt_dbg_target_ops {
	u32 (*cpu_count)(void *ctx);		/* CPUs, online or not */
	bool (*cpu_online)(void *ctx, u32 cpu);	/* virtualized and parked */
	int (*read_regs)(void *ctx, u32 cpu, struct vt_dbg_regs *out);
	/* Applied by the owning CPU on resume (its VMCS is current only there). */
	int (*write_regs)(void *ctx, u32 cpu, const struct vt_dbg_regs *in);
	/*
	 * Guest-virtual memory through that CPU's CR3. Return the bytes done
	 * (a short count stops at the first unmapped or non-RAM page), or a
	 * negative errno when not even the first byte was accessible.
	 */
	int (*read_mem)(void *ctx, u32 cpu, u64 gva, void *buf, u32 len);
	int (*write_mem)(void *ctx, u32 cpu, u64 gva, const void *buf, u32 len);
	int (*insert_point)(void *ctx, u32 cpu, enum vt_dbg_point type, u64 addr, u64 len);
	int (*remove_point)(void *ctx, u32 cpu, enum vt_dbg_point type, u64 addr, u64 len);
	/* Remove every breakpoint, watchpoint and trap; leave the hypervisor loaded. */
	void (*remove_all)(void *ctx);
	/*
	 * Ends the stop: run[c] says what CPU c does. Returns once the CPUs
	 * have been released; the next stop is reported through
	 * vt_rsp_report_stop(). Non-zero: refused (nothing resumed).
	 */
	int (*resume)(void *ctx, const enum vt_dbg_run *run, u32 count);
	/* qRcmd: writes a NUL-terminated answer of at most out_len bytes. */
	int (*monitor)(void *ctx, const char *cmd, char *out, u32 out_len);
	/*
	 * Branch tracing (Qbtrace, qXfer:btrace); NULL where the target has
	 * none. Enabling starts a new trace of that CPU: 0, or -VT_EOPNOTSUPP
	 * (no tracer on this machine), -VT_EINVAL.
	 */
	int (*btrace_enable)(void *ctx, u32 cpu, bool on);
	/* Its taken-branch records, oldest first. */
	u64 (*btrace_count)(void *ctx, u32 cpu);
	bool (*btrace_record)(void *ctx, u32 cpu, u64 index, struct vtice_record *out);
	/* Where the trace's first block begins and its newest block ends. */
	void (*btrace_span)(void *ctx, u32 cpu, u64 *first_ip, u64 *last_ip);
	/* Records cpu's trace holds while it is on; 0 while it is off. */
	u32 (*btrace_size)(void *ctx, u32 cpu);
	/*
	 * Probes armed by the debugger (`probe` in vtice attach, rsp_probes.c);
	 * NULL where the target has none. op is a VTICE_VMCALL_PROBE_* with
	 * the VMCALL's arguments, except that ADD and WATCH take no frame: the
	 * target finds it through cpu's page tables. 0 or a negative errno.
	 */
	int (*probe_op)(void *ctx, u32 cpu, u32 op, u64 a, u64 b, u64 c);
	/* Hits recorded since load; with passed_over, those the filter or a KEEP did not record. */
	u64 (*probe_hits)(void *ctx, bool passed_over);
	/*
	 * Times a module's going removed the probes, since load (the kernel
	 * side's module notifier; probe_points.h); NULL where nothing does.
	 */
	u64 (*probe_removed)(void *ctx);
	/*
	 * What probe address index (ADD's order) counted in root, as op
	 * (VTICE_VMCALL_PROBE_COUNT, _SUM, _HIST, _KEY or _UNREADABLE) asks:
	 * the hits its program counted, what its SUM added up or MIN or MAX
	 * kept, its HIST's hits in bucket b, KEYED's slot b & 0xff's count or
	 * key word (b >> 8, vmcall.h), or the values those hits found
	 * unreadable; false past the last, or b out of range.
	 */
	bool (*probe_count)(void *ctx, u32 op, u32 index, u32 b, u64 *count);
	u64 (*tsc_khz)(void *ctx);	/* the rate of the TSC the records carry */
	/*
	 * The syscall trap armed by the debugger (syscall: probes through the
	 * stub, rsp_probes.c), part of the probes' ops: as arm says (the
	 * task filter, the string slots VTICE_VMCALL_SYSCALL_STRINGS takes,
	 * the syscalls recorded), or off (NULL); each CPU arms or disarms
	 * as it leaves the stop. 0, -VT_EBUSY (the kernel side's trap is
	 * armed), -VT_EOPNOTSUPP (a CPU cannot arm it), -VT_EINVAL.
	 */
	int (*syscall_trap)(void *ctx, const struct vt_sys_stub_arm *arm);
	/*
	 * CPUs with the trap armed now; SYSCALL/SYSRET executed for the guest
	 * while armed, and those recorded, since load.
	 */
	void (*syscall_counts)(void *ctx, u64 *armed, u64 *seen, u64 *recorded);
	/*
	 * The profiler armed by the debugger (profile: probes), part of the
	 * probes' ops. on: every CPU samples hz times a second, with
	 * stack_bytes of its kernel stack, the filter's task only; each CPU
	 * starts or stops as it leaves the stop. 0, -VT_EBUSY (the kernel
	 * side's profiler runs), -VT_EOPNOTSUPP (no VMX-preemption timer),
	 * -VT_EINVAL.
	 */
	int (*profile)(void *ctx, bool on, u32 hz, u32 stack_bytes, u32 pid, const char comm[16]);
	/* CPUs sampling now; samples recorded since load. */
	void (*profile_counts)(void *ctx, u64 *armed, u64 *samples);
	/*
	 * cpu's record ring, where the probes' hits go: records not yet read,
	 * and how many were lost since load; the index-th unread (0 = oldest);
	 * taking count of them. False / NULL: cpu has no ring.
	 */
	bool (*ring_unread)(void *ctx, u32 cpu, u64 *unread, u64 *lost);
	bool (*ring_record)(void *ctx, u32 cpu, u64 index, struct vtice_record *out);
	void (*ring_consume)(void *ctx, u32 cpu, u64 count);
};

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_TARGET_H */
