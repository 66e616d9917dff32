// SPDX-License-Identifier: GPL-2.0
/*
 * Control-register family: MOV to/from CR0/CR3/CR4/CR8 (SDM Vol. 3C 25.1.3,
 * exit qualification Table 28-3), MOV DR, XSETBV, INVD and INVPCID.
 * The hypervisor owns (guest/host mask, SDM Vol. 3C 25.3) only the bits VMX
 * operation fixes to 1 that the kernel may clear on the bare CPU: CR4.VMXE
 * and CR0.NE. The kernel reads and writes them through the read shadows,
 * as on the bare CPU (it may set VMXE: the CPU has VMX, exit_vmx.c), while
 * the CPU keeps them set.
 */
#include "exit.h"
#include "intrin.h"
#include "os.h"

u64 vt_cr0_owned(const struct vt_vmx_caps *c)
{
	return c->cr0_fixed0 & ~(u64)(X86_CR0_PE | X86_CR0_PG);
}

static u64 vt_cr_view(u64 real_field, u64 shadow_field, u64 mask_field)
{
	u64 mask = vt_vmread_or0(mask_field);

	return (vt_vmread_or0(real_field) & ~mask) | (vt_vmread_or0(shadow_field) & mask);
}

u64 vt_guest_cr0(void)
{
	return vt_cr_view(GUEST_CR0, CR0_READ_SHADOW, CR0_GUEST_HOST_MASK);
}

u64 vt_guest_cr4(void)
{
	return vt_cr_view(GUEST_CR4, CR4_READ_SHADOW, CR4_GUEST_HOST_MASK);
}

/* The guest's IA32_EFER: in the VMCS where VM entry loads it, else the live MSR. */
static u64 vt_guest_efer(const struct vt_vcpu *vcpu)
{
	if (vcpu->hv->ctls.entry & VM_ENTRY_LOAD_IA32_EFER)
		return vt_vmread_or0(GUEST_IA32_EFER);
	return vt_rdmsr(MSR_EFER);
}

/*
 * The #GP(0) checks of MOV to CR0 (SDM Vol. 2B, MOV—Move to/from Control
 * Registers). PAE paging outside IA-32e mode stays refused: turning it on
 * loads the four PDPTEs, which with EPT would have to be read from the
 * guest into the VMCS (SDM Vol. 3C 27.3.2.4), and no 64-bit kernel goes
 * through that mode.
 */
static bool vt_cr0_write_faults(u64 value, u64 old, u64 cr4, u64 efer)
{
	bool paging_on = (value & X86_CR0_PG) && !(old & X86_CR0_PG);

	if ((value >> 32) || ((value & X86_CR0_NW) && !(value & X86_CR0_CD)) ||
	    ((value & X86_CR0_PG) && !(value & X86_CR0_PE)))
		return true;
	if (!(value & X86_CR0_WP) && (cr4 & X86_CR4_CET))
		return true;
	if (paging_on && (cr4 & X86_CR4_PAE) != ((efer & EFER_LME) ? X86_CR4_PAE : 0))
		return true;	/* LME without PAE faults; PAE without LME: above */
	return !(value & X86_CR0_PG) && (old & X86_CR0_PG) && vt_guest_in_64bit_mode();
}

/*
 * Paging turned on with EFER.LME set activates IA-32e mode, turned off it
 * leaves it (SDM Vol. 3A 10.8.5); at VM entry the "IA-32e mode guest"
 * control says which (SDM Vol. 3C 27.3.2.1).
 */
static void vt_cr0_paging_changed(const struct vt_vcpu *vcpu, bool paging)
{
	u64 entry = vt_vmread_or0(VM_ENTRY_CONTROLS);
	u64 efer = vt_guest_efer(vcpu);
	bool ia32e = paging && (efer & EFER_LME);

	if (vcpu->hv->ctls.entry & VM_ENTRY_LOAD_IA32_EFER)
		vt_vmwrite(GUEST_IA32_EFER, ia32e ? efer | EFER_LMA : efer & ~(u64)EFER_LMA);
	vt_vmwrite(VM_ENTRY_CONTROLS, ia32e ? entry | VM_ENTRY_IA32E_MODE : entry & ~(u64)VM_ENTRY_IA32E_MODE);
}

/*
 * Only a write that changes an owned bit exits. The kernel's own writes
 * that also turn protection or paging on or off come from a CPU that INIT
 * and SIPI brought up under vtice (exit_init.c): its real-mode trampoline
 * enters protected mode, then IA-32e mode, each write setting CR0.NE too.
 * They are carried out as the CPU would, which unrestricted guest allows
 * in every one of those modes (SDM Vol. 3C 26.6). Outside 64-bit mode the
 * operand is 32 bits.
 */
static enum vt_exit_action vt_mov_to_cr0(struct vt_exit *exit, u64 value)
{
	const struct vt_vmx_caps *c = &exit->vcpu->hv->caps;
	u64 owned = vt_cr0_owned(c), old = vt_guest_cr0(), real;

	if (!vt_guest_in_64bit_mode())
		value = (u32)value;
	real = value | owned;
	if (vt_cr0_write_faults(value, old, vt_guest_cr4(), vt_guest_efer(exit->vcpu)) ||
	    !vt_cr_fixed_ok(real, owned, c->cr0_fixed1))
		return vt_complete(exit, true);
	if ((value ^ old) & X86_CR0_PG)
		vt_cr0_paging_changed(exit->vcpu, value & X86_CR0_PG);
	vt_vmwrite(GUEST_CR0, real);
	vt_vmwrite(CR0_READ_SHADOW, value);
	if ((value ^ old) & (X86_CR0_PG | X86_CR0_PE | X86_CR0_WP))
		vt_flush_guest_tlb(exit->vcpu);	/* as the CPU's own mode change does */
	return vt_complete(exit, false);
}

static enum vt_exit_action vt_mov_to_cr4(struct vt_exit *exit, u64 value)
{
	const struct vt_vmx_caps *c = &exit->vcpu->hv->caps;
	u64 real = value | X86_CR4_VMXE;

	if (!vt_cr_fixed_ok(real, c->cr4_fixed0, c->cr4_fixed1))
		return vt_complete(exit, true);
	vt_vmwrite(GUEST_CR4, real);
	vt_vmwrite(CR4_READ_SHADOW, value);
	/* PGE/PCIDE changes flush the TLB natively (SDM 3A 4.10.4.1). */
	vt_flush_guest_tlb(exit->vcpu);
	return vt_complete(exit, false);
}

/* Only reached on CPUs that force CR3-load/store exiting (no TRUE MSRs). */
static enum vt_exit_action vt_mov_to_cr3(struct vt_exit *exit, u64 value)
{
	u64 cr4 = vt_vmread_or0(GUEST_CR4);

	vt_vmwrite(GUEST_CR3, value & ~X86_CR3_PCID_NOFLUSH);
	if (!((cr4 & X86_CR4_PCIDE) && (value & X86_CR3_PCID_NOFLUSH)))
		vt_flush_guest_tlb(exit->vcpu);
	return vt_complete(exit, false);
}

enum vt_exit_action vt_handle_cr_access(struct vt_exit *exit)
{
	u32 cr = exit->qual & CONTROL_REG_ACCESS_NUM;
	u32 type = (exit->qual & CONTROL_REG_ACCESS_TYPE) >> CONTROL_REG_ACCESS_TYPE_SHIFT;
	u32 reg = (exit->qual & CONTROL_REG_ACCESS_REG) >> CONTROL_REG_ACCESS_REG_SHIFT;
	u64 value = vt_read_gpr(exit, reg);

	if (type == CR_ACCESS_MOV_TO_CR) {
		switch (cr) {
		case 0:
			return vt_mov_to_cr0(exit, value);
		case 3:
			return vt_mov_to_cr3(exit, value);
		case 4:
			return vt_mov_to_cr4(exit, value);
		case 8:
			vt_write_cr8(value);
			return vt_complete(exit, false);
		}
	} else if (type == CR_ACCESS_MOV_FROM_CR && (cr == 3 || cr == 8)) {
		vt_write_gpr(exit, reg, cr == 3 ? vt_vmread_or0(GUEST_CR3) : vt_read_cr8());
		return vt_complete(exit, false);
	}
	/* CLTS/LMSW only exit for CR0 bits we own, and they touch none (NE is bit 5). */
	return vt_handle_fatal(exit);
}

/*
 * MOV DR exits only while a debugger owns the debug registers and set
 * MOV-DR exiting (control.c); it emulates them against its shadows. Without
 * one that takes the exit there is nothing sound to emulate against.
 */
enum vt_exit_action vt_handle_dr_access(struct vt_exit *exit)
{
	const struct vt_callbacks *cb = exit->vcpu->hv->cb;

	if (cb && cb->dr_access && cb->dr_access(exit->vcpu, exit))
		return VT_EXIT_RESUME;
	return vt_handle_fatal(exit);
}

/* XCR0 rules of XSETBV (SDM Vol. 2D XSETBV, Vol. 1 13.3). */
static bool vt_xcr0_valid(u64 value)
{
	struct vt_cpuid_regs r;
	u64 supported;

	vt_cpuid(0xd, 0, &r);
	supported = ((u64)r.edx << 32) | r.eax;
	if (!(value & XFEATURE_MASK_FP) || (value & ~supported))
		return false;
	if ((value & XFEATURE_MASK_YMM) && !(value & XFEATURE_MASK_SSE))
		return false;
	if ((value & XFEATURE_MASK_AVX512) &&
	    ((value & XFEATURE_MASK_AVX512) != XFEATURE_MASK_AVX512 ||
	     !(value & XFEATURE_MASK_YMM)))
		return false;
	/* MPX: BNDREGS and BNDCSR together or not at all */
	return ((value >> 3) & 1) == ((value >> 4) & 1);
}

enum vt_exit_action vt_handle_xsetbv(struct vt_exit *exit)
{
	struct vt_guest_regs *r = exit->regs;
	u64 value = (r->rdx << 32) | (u32)r->rax;

	if (!(vt_vmread_or0(GUEST_CR4) & X86_CR4_OSXSAVE)) {
		vt_inject_ud(exit);
		return VT_EXIT_RESUME;
	}
	if (vt_guest_cpl() != 0 || (u32)r->rcx != 0 || !vt_xcr0_valid(value))
		return vt_complete(exit, true);
	vt_xsetbv(0, value);
	return vt_complete(exit, false);
}

/* INVD would drop dirty lines the kernel still owns; write them back. */
enum vt_exit_action vt_handle_invd(struct vt_exit *exit)
{
	vt_wbinvd();
	return vt_complete(exit, false);
}

/*
 * INVPCID exits only with "INVLPG exiting" set, which this hypervisor
 * leaves clear; if a CPU forces it, flush all of the guest's translations
 * (more than asked for, which is always safe). The type register is
 * VMX-instruction-information bits 31:28 (SDM 3C Table 28-13).
 */
enum vt_exit_action vt_handle_invpcid(struct vt_exit *exit)
{
	u32 info = (u32)vt_vmread_or0(VMX_INSTRUCTION_INFO);
	u64 type = vt_read_gpr(exit, (info >> 28) & 0xf);

	if (type > 3)
		return vt_complete(exit, true);
	vt_flush_guest_tlb(exit->vcpu);
	return vt_complete(exit, false);
}
