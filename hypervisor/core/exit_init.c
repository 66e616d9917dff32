// SPDX-License-Identifier: GPL-2.0
/*
 * INIT and startup IPIs, done as the bare CPU does them.
 *
 * In VMX non-root an INIT does not reset the CPU: it causes a VM exit
 * (SDM 3C 26.2), and a CPU in VMX operation takes no SIPI by itself. Ignored,
 * the INIT would tell a kernel that something holds the CPU (it keeps
 * running), and a kexec'd kernel starting its CPUs would wait for one that
 * never comes. So the guest gets what the INIT would have given it: the INIT
 * state of SDM 3A 10.1.1 (Table 10-1) in the wait-for-SIPI activity state
 * (SDM 3C 25.4.2), where the next SIPI causes a VM exit carrying its vector
 * (SDM 3C 26.2, 28.2.1); the guest then starts in real mode at VV00:0000,
 * which unrestricted guest allows (SDM 3C 27.3.1.1).
 *
 * What an INIT leaves alone stays: MTRRs, PAT, the other MSRs, x87/SSE
 * state and XCR0, and vtice's own state of this CPU (its traps, a trace).
 */
#include "exit.h"
#include "intrin.h"
#include "os.h"
#include "segment.h"

/* Real-mode segment access rights (VMX format, SDM 3C 24.4.1). */
#define VT_AR_REAL_CODE	0x9bu	/* present, S, execute/read, accessed */
#define VT_AR_REAL_DATA	0x93u	/* present, S, read/write, accessed */
#define VT_AR_REAL_LDTR	0x82u	/* present, LDT */
#define VT_AR_REAL_TR	0x8bu	/* present, busy 32-bit TSS (26.3.1.2) */

#define VT_INIT_RIP	0xfff0u
#define VT_INIT_CS	0xf000u
#define VT_INIT_CS_BASE	0xffff0000ull
#define VT_REAL_LIMIT	0xffffu

/* Segment i (VT_SEG_*, segment.h) of the guest-state area. */
static void vt_write_real_segment(int i, u16 sel, u64 base, u32 ar)
{
	vt_vmwrite(GUEST_ES_SELECTOR + 2 * i, sel);
	vt_vmwrite(GUEST_ES_BASE + 2 * i, base);
	vt_vmwrite(GUEST_ES_LIMIT + 2 * i, VT_REAL_LIMIT);
	vt_vmwrite(GUEST_ES_AR_BYTES + 2 * i, ar);
}

static void vt_init_segments(void)
{
	int i;

	for (i = VT_SEG_ES; i <= VT_SEG_GS; i++)
		vt_write_real_segment(i, 0, 0, VT_AR_REAL_DATA);
	vt_write_real_segment(VT_SEG_CS, VT_INIT_CS, VT_INIT_CS_BASE, VT_AR_REAL_CODE);
	vt_write_real_segment(VT_SEG_LDTR, 0, 0, VT_AR_REAL_LDTR);
	vt_write_real_segment(VT_SEG_TR, 0, 0, VT_AR_REAL_TR);
	vt_vmwrite(GUEST_GDTR_BASE, 0);
	vt_vmwrite(GUEST_GDTR_LIMIT, VT_REAL_LIMIT);
	vt_vmwrite(GUEST_IDTR_BASE, 0);
	vt_vmwrite(GUEST_IDTR_LIMIT, VT_REAL_LIMIT);
}

/*
 * CR0 keeps CD and NW and sets ET (Table 10-1, INIT column); the bits
 * vtice owns stay set underneath, as at every MOV to CR0 (exit_cr.c).
 * CR4 reads 0 over the VMXE that VMX operation needs.
 */
static void vt_init_control_registers(const struct vt_vmx_caps *caps)
{
	u64 cr0 = (vt_guest_cr0() & (X86_CR0_CD | X86_CR0_NW)) | X86_CR0_ET;

	vt_vmwrite(CR0_READ_SHADOW, cr0);
	vt_vmwrite(GUEST_CR0, cr0 | vt_cr0_owned(caps));
	vt_vmwrite(CR4_READ_SHADOW, 0);
	vt_vmwrite(GUEST_CR4, X86_CR4_VMXE);
	vt_vmwrite(GUEST_CR3, 0);
}

/* EFER is 0 after INIT, so the guest is no longer in IA-32e mode (26.3.1.1). */
static void vt_init_efer(struct vt_vcpu *vcpu)
{
	vt_vmwrite(GUEST_IA32_EFER, 0);
	vcpu->sys.guest_sce = false;
	vt_vmwrite(VM_ENTRY_CONTROLS, vt_vmread_or0(VM_ENTRY_CONTROLS) & ~(u64)VM_ENTRY_IA32E_MODE);
}

/*
 * The CET state the VMCS loads is 0 after an INIT, as the MSRs are on the
 * bare CPU (sandpile.org's INIT column: S_CET, SSP, the SSP table).
 */
static void vt_init_cet(const struct vt_vcpu *vcpu)
{
	if (!(vcpu->hv->ctls.entry & VM_ENTRY_LOAD_CET_STATE))
		return;
	vt_vmwrite(GUEST_S_CET, 0);
	vt_vmwrite(GUEST_SSP, 0);
	vt_vmwrite(GUEST_INTR_SSP_TABLE, 0);
}

/*
 * DR0-DR3 are 0, DR6 FFFF0FF0H and DR7 400H after an INIT (Table 10-1).
 * Only DR7 is guest state in the VMCS; DR0-DR3 and DR6 are the CPU's own
 * registers in VMX non-root (SDM 3C 27.3.1, 28.5.1), written here. A debug
 * stub that holds the debug registers for hardware breakpoints (debug/dr.c)
 * keeps the guest's values in its shadows: it resets those instead, and its
 * own breakpoints stay armed.
 */
static void vt_init_debug_registers(struct vt_vcpu *vcpu)
{
	const struct vt_callbacks *cb = vcpu->hv->cb;
	u32 n;

	if (cb && cb->init_debug_registers && cb->init_debug_registers(vcpu))
		return;
	for (n = 0; n < 4; n++)
		vt_write_dr(n, 0);
	vt_write_dr(6, DR6_INIT);
	vt_vmwrite(GUEST_DR7, DR7_FIXED_1);
}

/* EDX holds the processor signature, CPUID.1:EAX; every other GPR is 0. */
static void vt_init_gprs(struct vt_guest_regs *regs)
{
	struct vt_cpuid_regs id;

	vt_cpuid(1, 0, &id);
	*regs = (struct vt_guest_regs){ .rdx = id.eax };
	vt_vmwrite(GUEST_RSP, 0);
	vt_vmwrite(GUEST_RIP, VT_INIT_RIP);
	vt_vmwrite(GUEST_RFLAGS, X86_EFLAGS_FIXED);
}

enum vt_exit_action vt_handle_init_signal(struct vt_exit *exit)
{
	struct vt_vcpu *vcpu = exit->vcpu;

	if (!(vcpu->hv->caps.misc & VMX_MISC_WAIT_FOR_SIPI)) {
		vt_root_report(vcpu, VT_RE_INIT_IGNORED, 0, 0, 0, 0);
		return VT_EXIT_RESUME;
	}
	vt_init_segments();
	vt_init_control_registers(&vcpu->hv->caps);
	vt_init_efer(vcpu);
	vt_init_cet(vcpu);
	vt_init_gprs(exit->regs);
	vt_init_debug_registers(vcpu);
	/* No event survives an INIT; wait-for-SIPI takes none (26.3.1.5). */
	vt_events_reset(vcpu);
	vt_vmwrite(VM_ENTRY_INTR_INFO_FIELD, 0);
	vt_vmwrite(GUEST_INTERRUPTIBILITY_INFO, 0);
	vt_vmwrite(GUEST_PENDING_DBG_EXCEPTIONS, 0);
	vt_vmwrite(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_WAIT_SIPI);
	return VT_EXIT_RESUME;
}

/* The exit qualification's bits 7:0 are the SIPI's vector (SDM 3C 28.2.1). */
enum vt_exit_action vt_handle_sipi_signal(struct vt_exit *exit)
{
	u64 vector = exit->qual & 0xffu;

	vt_write_real_segment(VT_SEG_CS, (u16)(vector << 8), vector << 12, VT_AR_REAL_CODE);
	vt_vmwrite(GUEST_RIP, 0);
	vt_vmwrite(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
	return VT_EXIT_RESUME;
}
