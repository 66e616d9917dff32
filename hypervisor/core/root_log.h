/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What VMX root has to report, without printk: VMX root must not run the
 * kernel's code, which a hostile kernel can rewrite (docs/hypervisor.md,
 * "Self-protection"), and printk would also take locks the interrupted
 * kernel may hold. Root writes fixed events into its vCPU's exit-counts
 * page, which the kernel reads, and the OS layer prints them later from
 * kernel context (os/linux/root_log_print.c). Root only writes that page,
 * and bounds the slot it writes by itself.
 */
#ifndef VT_CORE_ROOT_LOG_H
#define VT_CORE_ROOT_LOG_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

enum vt_root_event_code {
	VT_RE_NONE,
	VT_RE_RESUME_FAILED,		/* VM-instruction error */
	VT_RE_EPT_VIOLATION,		/* gpa, qualification, rip: unhandled, left VMX */
	VT_RE_EPT_MISCONFIG,		/* gpa, entry, level: left VMX */
	VT_RE_TRIPLE_FAULT,		/* rip, rsp, cr3, IDT-vectoring info */
	VT_RE_INIT_IGNORED,
	VT_RE_UNEXPECTED_EXIT,		/* reason, qualification, rip: left VMX */
	VT_RE_NO_MOV_DR_EXITING,	/* the guest sees the debugger's debug registers */
	VT_RE_SPLIT_STEP_FAILED,	/* gpa: that page's breakpoints stay disarmed */
	VT_RE_TOO_MANY_PAGES,		/* pages: one instruction touches more hooked pages */
	VT_RE_ROOT_FAULT,		/* vector, rip, error code, cr2: this CPU halted */
	VT_RE_STEP_VIEW_FULL,		/* pages, tables: a step's own EPT view ran out of tables */
	VT_RE_CODES
};

#define VT_ROOT_EVENTS	16	/* per CPU, a power of two: the newest are kept */

struct vt_root_event {
	u64 seq;		/* written + 1 once the rest is in place: a reader's check */
	u32 code;		/* enum vt_root_event_code */
	u32 cpu;
	u64 arg[4];
};

struct vt_root_log {
	u64 written;		/* events written so far; the next goes in slot written % N */
	struct vt_root_event ev[VT_ROOT_EVENTS];
};

struct vt_vcpu;

/* VMX root, on the vCPU's own CPU. */
void vt_root_report(struct vt_vcpu *vcpu, enum vt_root_event_code code, u64 a0, u64 a1, u64 a2, u64 a3);
/*
 * Kernel side: the events of log after *seen, oldest first, handed to
 * print(); *seen moves on. Events overwritten before they were read are
 * counted in the return value (lost).
 */
typedef void (*vt_root_event_fn)(const struct vt_root_event *ev, void *ctx);
u64 vt_root_log_drain(const struct vt_root_log *log, u64 *seen, vt_root_event_fn print, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* VT_CORE_ROOT_LOG_H */
