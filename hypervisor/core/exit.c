// SPDX-License-Identifier: GPL-2.0
/*
 * VM-exit dispatcher. The stub saved the guest GPRs; everything else about
 * the guest is in the current VMCS. Exits this hypervisor never enables
 * (HLT, I/O, interrupt window...) fall to vt_handle_fatal: the CPU is given
 * back to the kernel unvirtualized rather than left in an unknown state.
 */
#include "exit.h"
#include "intrin.h"
#include "os.h"

VT_STATIC_ASSERT(VT_EXIT_REASON_COUNT == VT_EXIT_SLOTS, "exit counters cover the table");

static const vt_exit_fn vt_exit_table[VT_EXIT_REASON_COUNT] = {
	[EXIT_REASON_EXCEPTION_NMI]	= vt_handle_exception_nmi,
	[EXIT_REASON_EXTERNAL_INTERRUPT] = vt_handle_external_interrupt,
	[EXIT_REASON_TRIPLE_FAULT]	= vt_handle_triple_fault,
	[EXIT_REASON_INIT_SIGNAL]	= vt_handle_init_signal,
	[EXIT_REASON_SIPI_SIGNAL]	= vt_handle_sipi_signal,
	[EXIT_REASON_INTERRUPT_WINDOW]	= vt_handle_interrupt_window,
	[EXIT_REASON_NMI_WINDOW]	= vt_handle_nmi_window,
	[EXIT_REASON_CPUID]		= vt_handle_cpuid,
	[EXIT_REASON_GETSEC]		= vt_handle_vmx_instruction,
	[EXIT_REASON_INVD]		= vt_handle_invd,
	[EXIT_REASON_VMCALL]		= vt_handle_vmcall,
	[EXIT_REASON_VMCLEAR]		= vt_handle_vmx_instruction,
	[EXIT_REASON_VMLAUNCH]		= vt_handle_vmx_instruction,
	[EXIT_REASON_VMPTRLD]		= vt_handle_vmx_instruction,
	[EXIT_REASON_VMPTRST]		= vt_handle_vmx_instruction,
	[EXIT_REASON_VMREAD]		= vt_handle_vmx_instruction,
	[EXIT_REASON_VMRESUME]		= vt_handle_vmx_instruction,
	[EXIT_REASON_VMWRITE]		= vt_handle_vmx_instruction,
	[EXIT_REASON_VMOFF]		= vt_handle_vmx_instruction,
	[EXIT_REASON_VMON]		= vt_handle_vmx_instruction,
	[EXIT_REASON_CR_ACCESS]		= vt_handle_cr_access,
	[EXIT_REASON_DR_ACCESS]		= vt_handle_dr_access,
	[EXIT_REASON_IO_INSTRUCTION]	= vt_handle_io,
	[EXIT_REASON_PREEMPTION_TIMER]	= vt_handle_preempt_timer,
	[EXIT_REASON_MSR_READ]		= vt_handle_rdmsr,
	[EXIT_REASON_MSR_WRITE]		= vt_handle_wrmsr,
	[EXIT_REASON_MONITOR_TRAP_FLAG]	= vt_handle_mtf,
	[EXIT_REASON_EPT_VIOLATION]	= vt_handle_ept_violation,
	[EXIT_REASON_EPT_MISCONFIG]	= vt_handle_ept_misconfig,
	[EXIT_REASON_INVEPT]		= vt_handle_vmx_instruction,
	[EXIT_REASON_INVVPID]		= vt_handle_vmx_instruction,
	[EXIT_REASON_VMFUNC]		= vt_handle_vmx_instruction,
	[EXIT_REASON_XSETBV]		= vt_handle_xsetbv,
	[EXIT_REASON_INVPCID]		= vt_handle_invpcid,
};

vt_exit_fn vt_exit_lookup(u32 basic)
{
	if (basic < VT_EXIT_REASON_COUNT && vt_exit_table[basic])
		return vt_exit_table[basic];
	return vt_handle_fatal;
}

u64 vt_vmread_or0(u64 field)
{
	u64 v = 0;

	if (vt_vmread(field, &v) != VT_VMX_OK)
		return 0;
	return v;
}

/*
 * IA-32e mode in a 64-bit code segment. Every VM exit stores EFER.LMA into
 * the "IA-32e mode guest" entry control (SDM Vol. 3C 28.2, VM exits), so the
 * control is right whether or not VM entry loads IA32_EFER.
 */
bool vt_guest_in_64bit_mode(void)
{
	return (vt_vmread_or0(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE) &&
	       (vt_vmread_or0(GUEST_CS_AR_BYTES) & VMX_AR_L_MASK);
}

void vt_advance_rip(struct vt_exit *exit)
{
	u64 rip = vt_vmread_or0(GUEST_RIP);
	u64 len = vt_vmread_or0(VM_EXIT_INSTRUCTION_LEN);
	u64 interruptibility = vt_vmread_or0(GUEST_INTERRUPTIBILITY_INFO);

	vt_vmwrite(GUEST_RIP, rip + len);
	exit->rip_advanced = true;
	/* Emulating an instruction ends STI/MOV-SS blocking (SDM 3C 25.1.2). */
	if (interruptibility & (GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS))
		vt_vmwrite(GUEST_INTERRUPTIBILITY_INFO,
			   interruptibility & ~(u64)(GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
}

/* Hardware exception injection, SDM Vol. 3C 24.8.3 and 27.6. */
void vt_inject_exception(struct vt_exit *exit, u8 vector, bool has_error, u32 error)
{
	u32 info = vector | INTR_TYPE_HARD_EXCEPTION | INTR_INFO_VALID_MASK;

	/*
	 * Real mode pushes no error code, and VM entry fails if one is asked
	 * for with CR0.PE clear under unrestricted guest (SDM 3C 27.2.1.3).
	 */
	if (has_error && (vt_vmread_or0(GUEST_CR0) & X86_CR0_PE)) {
		info |= INTR_INFO_DELIVER_CODE_MASK;
		vt_vmwrite(VM_ENTRY_EXCEPTION_ERROR_CODE, error);
	}
	vt_vmwrite(VM_ENTRY_INTR_INFO_FIELD, info);
	exit->injected = true;
}

void vt_inject_ud(struct vt_exit *exit)
{
	vt_inject_exception(exit, X86_TRAP_UD, false, 0);
}

void vt_inject_gp0(struct vt_exit *exit)
{
	vt_inject_exception(exit, X86_TRAP_GP, true, 0);
}

/* GPR numbering of exit qualifications (SDM 3C Table 28-3): RAX..R15. */
u64 *vt_gpr(struct vt_guest_regs *regs, u32 index)
{
	u64 *gprs = &regs->rax;

	if (index == 4 || index > 15)
		return NULL;
	return &gprs[index];
}

u64 vt_read_gpr(struct vt_exit *exit, u32 index)
{
	u64 *r = vt_gpr(exit->regs, index);

	return r ? *r : vt_vmread_or0(GUEST_RSP);
}

void vt_write_gpr(struct vt_exit *exit, u32 index, u64 value)
{
	u64 *r = vt_gpr(exit->regs, index);

	if (r)
		*r = value;
	else
		vt_vmwrite(GUEST_RSP, value);
}

/* The current privilege level is SS.DPL (SDM Vol. 3A 5.5, 3C 24.4.1). */
u32 vt_guest_cpl(void)
{
	return VMX_AR_DPL(vt_vmread_or0(GUEST_SS_AR_BYTES));
}

/* Drop the guest's cached linear translations (its VPID only). */
void vt_flush_guest_tlb(struct vt_vcpu *vcpu)
{
	if (vcpu->hv->ctls.proc2 & SECONDARY_EXEC_ENABLE_VPID)
		vt_invvpid(VMX_VPID_EXTENT_SINGLE_CONTEXT, vcpu->vpid, 0);
}

enum vt_exit_action vt_complete(struct vt_exit *exit, bool fault)
{
	if (fault)
		vt_inject_gp0(exit);
	else
		vt_advance_rip(exit);
	return VT_EXIT_RESUME;
}

/*
 * An exit that interrupted the delivery of an event (an EPT violation on a
 * watched stack page while an interrupt was being delivered, say) leaves
 * the event in the IDT-vectoring field; unless the handler queued another
 * event, deliver it again on entry or it would be lost (SDM 3C 28.2.4,
 * 29.2.1.1 for the re-injection).
 */
static void vt_redeliver_vectored_event(struct vt_exit *exit)
{
	u64 info = vt_vmread_or0(IDT_VECTORING_INFO_FIELD);
	u32 type = (u32)info & INTR_INFO_INTR_TYPE_MASK;

	if (!(info & INTR_INFO_VALID_MASK) || exit->injected)
		return;
	if (info & INTR_INFO_DELIVER_CODE_MASK)
		vt_vmwrite(VM_ENTRY_EXCEPTION_ERROR_CODE, vt_vmread_or0(IDT_VECTORING_ERROR_CODE));
	if (type == INTR_TYPE_SOFT_INTR || type == INTR_TYPE_PRIV_SW_EXCEPTION ||
	    type == INTR_TYPE_SOFT_EXCEPTION)
		vt_vmwrite(VM_ENTRY_INSTRUCTION_LEN, vt_vmread_or0(VM_EXIT_INSTRUCTION_LEN));
	vt_vmwrite(VM_ENTRY_INTR_INFO_FIELD, info & ~(u64)INTR_INFO_UNBLOCK_NMI & 0xffffffffull);
	exit->injected = true;
	/*
	 * A debugger's single step may have asked for blocking by STI to hold
	 * interrupts off; VM entry refuses it with an external interrupt or
	 * NMI being injected (SDM 3C 26.3.1.5). The event wins: the step then
	 * ends on the handler's first instruction.
	 */
	if (type == INTR_TYPE_EXT_INTR || type == INTR_TYPE_NMI_INTR)
		vt_vmwrite(GUEST_INTERRUPTIBILITY_INFO,
			   vt_vmread_or0(GUEST_INTERRUPTIBILITY_INFO) & ~(u64)GUEST_INTR_STATE_STI);
}

static void vt_count_exit(struct vt_vcpu *vcpu, u32 basic)
{
	struct vt_exit_counts *c = vcpu->counts;

	c->total++;
	if (basic < VT_EXIT_REASON_COUNT)
		c->by_reason[basic]++;
	else
		c->unknown++;
}

/* An NMI that came while this CPU was in VMX root (root_idt.c). */
static void vt_take_root_nmi(struct vt_exit *exit)
{
	if (__atomic_exchange_n(&exit->vcpu->root_nmi, false, __ATOMIC_ACQ_REL))
		vt_take_nmi(exit);
}

/*
 * One that came after vt_take_root_nmi looked asked for an NMI window, but
 * a control the pre-entry work rewrote with a value read before may have
 * lost that bit: set it again, last. One arriving after this sets it itself.
 */
static void vt_keep_root_nmi_window(struct vt_vcpu *vcpu)
{
	if (__atomic_load_n(&vcpu->root_nmi, __ATOMIC_ACQUIRE))
		vt_update_control(CPU_BASED_VM_EXEC_CONTROL, CPU_BASED_NMI_WINDOW_EXITING, true);
}

/*
 * Whether the kernel can take this CPU back here, without VMX (hv->unloading):
 * nothing VM entry would deliver or hold (an event to inject, a window
 * asked for, blocking by STI, MOV SS or NMI, pending debug exceptions, an
 * NMI root took), running or halted, and at CPL 0 in the kernel's own code
 * segment with its GS base, which vt_vcpu_leave_vmx goes back to (not the
 * instant of a system call's entry before SWAPGS, nor user mode).
 */
static bool vt_kernel_may_take_over(const struct vt_vcpu *vcpu)
{
	u64 activity = vt_vmread_or0(GUEST_ACTIVITY_STATE);
	u64 windows = CPU_BASED_INTR_WINDOW_EXITING | CPU_BASED_NMI_WINDOW_EXITING | CPU_BASED_MONITOR_TRAP_FLAG;

	if (activity != GUEST_ACTIVITY_ACTIVE && activity != GUEST_ACTIVITY_HLT)
		return false;
	if ((vt_vmread_or0(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID_MASK) ||
	    (vt_vmread_or0(CPU_BASED_VM_EXEC_CONTROL) & windows) ||
	    vt_vmread_or0(GUEST_INTERRUPTIBILITY_INFO) || vt_vmread_or0(GUEST_PENDING_DBG_EXCEPTIONS) ||
	    __atomic_load_n(&vcpu->root_nmi, __ATOMIC_ACQUIRE))
		return false;
	return vt_guest_cpl() == 0 && vt_vmread_or0(GUEST_CS_SELECTOR) == vt_vmread_or0(HOST_CS_SELECTOR) &&
	       (vt_vmread_or0(GUEST_CS_AR_BYTES) & VMX_AR_L_MASK) &&
	       (vt_vmread_or0(GUEST_GS_BASE) >> 63);	/* the upper half, 4- or 5-level */
}

bool vt_exit_handler(struct vt_guest_regs *regs)
{
	struct vt_vcpu *vcpu = *(struct vt_vcpu **)(regs + 1);
	struct vt_exit exit = { .vcpu = vcpu, .regs = regs };

	vcpu->regs = regs;
	exit.reason = (u32)vt_vmread_or0(VM_EXIT_REASON);
	exit.basic = exit.reason & VMX_EXIT_REASON_BASIC_MASK;
	exit.qual = vt_vmread_or0(EXIT_QUALIFICATION);
	vt_count_exit(vcpu, exit.basic);
	if (exit.reason & VMX_EXIT_REASONS_FAILED_VMENTRY) {
		vt_handle_fatal(&exit);
		vt_vcpu_leave_vmx(vcpu, regs);
		return false;
	}
	if (vt_exit_lookup(exit.basic)(&exit) == VT_EXIT_LEAVE_VMX) {
		vt_vcpu_leave_vmx(vcpu, regs);
		return false;
	}
	vt_redeliver_vectored_event(&exit);
	vt_take_root_nmi(&exit);
	if (vcpu->hv->cb && vcpu->hv->cb->pre_entry)
		vcpu->hv->cb->pre_entry(vcpu, &exit);
	vt_wake_halted_windows(vcpu);
	vt_keep_root_nmi_window(vcpu);
	if (VT_LOAD_ACQUIRE(vcpu->hv->unloading) && vt_kernel_may_take_over(vcpu)) {
		vt_vcpu_leave_vmx(vcpu, regs);
		return false;
	}
	return true;
}

bool vt_resume_failed(struct vt_guest_regs *regs)
{
	struct vt_vcpu *vcpu = *(struct vt_vcpu **)(regs + 1);

	vcpu->last_vm_error = (u32)vt_vmread_or0(VM_INSTRUCTION_ERROR);
	vt_root_report(vcpu, VT_RE_RESUME_FAILED, vcpu->last_vm_error, 0, 0, 0);
	vt_vcpu_leave_vmx(vcpu, regs);
	return false;
}
