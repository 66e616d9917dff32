/* SPDX-License-Identifier: GPL-2.0 */
/* VM-exit dispatch: one handler per basic exit reason, grouped by family. */
#ifndef VT_CORE_EXIT_H
#define VT_CORE_EXIT_H

#include "hv.h"
#include "vmx_defs.h"

#ifdef __cplusplus
extern "C" {
#endif

enum vt_exit_action {
	VT_EXIT_RESUME,		/* VMRESUME the guest */
	VT_EXIT_LEAVE_VMX,	/* devirtualize this CPU, continue at regs->rip */
};

struct vt_exit {
	struct vt_vcpu *vcpu;
	struct vt_guest_regs *regs;
	u32 reason;		/* full exit reason */
	u32 basic;		/* bits 15:0 */
	u64 qual;		/* exit qualification */
	bool injected;		/* an event was queued for the next entry */
	bool rip_advanced;	/* the exiting instruction was emulated */
};

typedef enum vt_exit_action (*vt_exit_fn)(struct vt_exit *exit);

/* Entry point from the VM-exit stub: true = VMRESUME, false = left VMX. */
bool vt_exit_handler(struct vt_guest_regs *regs);
/* Called by the stub when VMRESUME itself failed; always leaves VMX. */
bool vt_resume_failed(struct vt_guest_regs *regs);
vt_exit_fn vt_exit_lookup(u32 basic);

/* exit.c helpers for handlers */
u64 vt_vmread_or0(u64 field);
/* The guest runs in 64-bit mode (IA-32e mode, CS.L set). */
bool vt_guest_in_64bit_mode(void);
void vt_advance_rip(struct vt_exit *exit);
void vt_inject_exception(struct vt_exit *exit, u8 vector, bool has_error, u32 error);
void vt_inject_ud(struct vt_exit *exit);
void vt_inject_gp0(struct vt_exit *exit);
u64 *vt_gpr(struct vt_guest_regs *regs, u32 index);	/* NULL for RSP (index 4) */
u64 vt_read_gpr(struct vt_exit *exit, u32 index);
void vt_write_gpr(struct vt_exit *exit, u32 index, u64 value);
u32 vt_guest_cpl(void);
void vt_flush_guest_tlb(struct vt_vcpu *vcpu);
/* parent.c: a hypervisor below vtice, and the VMCALLs that are its. */
enum vt_parent vt_find_parent(void);
bool vt_forward_to_parent(struct vt_exit *exit);
/* Finish an emulated instruction: #GP(0) if it faulted, else skip it. */
enum vt_exit_action vt_complete(struct vt_exit *exit, bool fault);
/*
 * exit_msr.c: the guest's DEBUGCTL is now `guest`: hand the shareable
 * owned bits it sets itself over to it, take back those it cleared.
 */
void vt_debugctl_share(struct vt_vcpu *vcpu, u64 guest);
/* exit_msr.c: IA32_PERF_GLOBAL_CTRL switched between the guest and root. */
bool vt_perf_global_switched(const struct vt_vcpu *vcpu);

/* exit_cr.c: CR0 and CR4 as the kernel sees them (owned bits from the read shadows). */
u64 vt_guest_cr0(void);
u64 vt_guest_cr4(void);

/* A CR0/CR4 value honours IA32_VMX_CRn_FIXED0/1 (SDM 3D A.7, A.8). */
static inline bool vt_cr_fixed_ok(u64 v, u64 fixed0, u64 fixed1)
{
	return (v & fixed0) == fixed0 && !(v & ~fixed1);
}
/* vcpu.c: restore the guest's state on the bare CPU and VMXOFF. */
void vt_vcpu_leave_vmx(struct vt_vcpu *vcpu, struct vt_guest_regs *regs);

/* Handlers, one file per family. */
enum vt_exit_action vt_handle_cpuid(struct vt_exit *exit);
enum vt_exit_action vt_handle_rdmsr(struct vt_exit *exit);
enum vt_exit_action vt_handle_wrmsr(struct vt_exit *exit);
enum vt_exit_action vt_handle_cr_access(struct vt_exit *exit);
enum vt_exit_action vt_handle_dr_access(struct vt_exit *exit);
enum vt_exit_action vt_handle_xsetbv(struct vt_exit *exit);
enum vt_exit_action vt_handle_invd(struct vt_exit *exit);
enum vt_exit_action vt_handle_invpcid(struct vt_exit *exit);
enum vt_exit_action vt_handle_ept_violation(struct vt_exit *exit);
enum vt_exit_action vt_handle_ept_misconfig(struct vt_exit *exit);
enum vt_exit_action vt_handle_exception_nmi(struct vt_exit *exit);
void vt_take_nmi(struct vt_exit *exit);
enum vt_exit_action vt_handle_nmi_window(struct vt_exit *exit);
enum vt_exit_action vt_handle_mtf(struct vt_exit *exit);
/*
 * control.c: set or clear bits of a VMCS control field of the current
 * VMCS (the caller has checked them against the capability MSRs).
 */
int vt_update_control(u32 field, u32 bits, bool on);

/* The exception or NMI that caused this exit, delivered to the guest unchanged. */
void vt_reflect_event(struct vt_exit *exit, u32 intr_info);
enum vt_exit_action vt_handle_external_interrupt(struct vt_exit *exit);
enum vt_exit_action vt_handle_interrupt_window(struct vt_exit *exit);
/* events.c, last before entry: a window's event into a halted guest now (not on the window's exit). */
void vt_wake_halted_windows(struct vt_vcpu *vcpu);
enum vt_exit_action vt_handle_vmx_instruction(struct vt_exit *exit);
enum vt_exit_action vt_handle_triple_fault(struct vt_exit *exit);
enum vt_exit_action vt_handle_init_signal(struct vt_exit *exit);
enum vt_exit_action vt_handle_sipi_signal(struct vt_exit *exit);
enum vt_exit_action vt_handle_fatal(struct vt_exit *exit);
enum vt_exit_action vt_handle_vmcall(struct vt_exit *exit);
enum vt_exit_action vt_handle_io(struct vt_exit *exit);
enum vt_exit_action vt_handle_preempt_timer(struct vt_exit *exit);
u16 vt_io_port(const struct vt_exit *exit);

#ifdef __cplusplus
}
#endif

#endif /* VT_CORE_EXIT_H */
