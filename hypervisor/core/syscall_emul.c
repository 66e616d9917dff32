// SPDX-License-Identifier: GPL-2.0
/*
 * SYSCALL and SYSRET executed by the hypervisor for the guest, following
 * the "Operation" sections of SDM Vol. 2B (SYSCALL, SYSRET), in IA-32e mode
 * on an Intel CPU. The caller has checked CS.L and EFER.LMA: outside 64-bit
 * mode both instructions #UD on Intel, and the guest's handler gets that.
 *
 * CET is modelled as the pseudocode has it: the user shadow stack's pointer
 * moves to and from IA32_PL3_SSP, the kernel's (if any) starts at 0, and
 * with IBT the kernel's entry must begin with ENDBR64. The guest's SSP and
 * IA32_S_CET are the VMCS's then (the "load CET state" controls, which
 * syscall_trap.c requires to arm while the guest has CR4.CET set).
 */
#include "syscall_trap.h"
#include "exit.h"
#include "intrin.h"

/* Flat segments both instructions load (access rights as in SDM 3C 24.4.1). */
#define VT_AR_CODE	(0xbu | VMX_AR_S_MASK | VMX_AR_P_MASK | VMX_AR_G_MASK)	/* execute/read, accessed */
#define VT_AR_DATA	(0x3u | VMX_AR_S_MASK | VMX_AR_P_MASK | VMX_AR_DB_MASK | VMX_AR_G_MASK)
#define VT_AR_DPL3	(3u << VMX_AR_DPL_SHIFT)
#define VT_FLAT_LIMIT	0xffffffffu	/* limit 0xfffff in 4 KiB units */
/* The RFLAGS bits SYSRET takes from R11 (SDM Vol. 2B SYSRET). */
#define VT_SYSRET_RFLAGS	0x3c7fd7ull
#define VT_MAX_INSN_LEN		15

static bool vt_is_legacy_prefix(u8 b)
{
	switch (b) {
	case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
	case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
		return true;
	default:
		return false;
	}
}

/*
 * A REX prefix counts only right before the opcode; one followed by a
 * legacy prefix is ignored (SDM Vol. 2A 2.2.1).
 */
void vt_sys_decode(const u8 *bytes, u32 n, struct vt_sys_insn *out)
{
	bool lock = false;
	u8 rex = 0;
	u32 i = 0;

	out->kind = VT_SYS_OTHER;
	for (; i < n && i < VT_MAX_INSN_LEN; i++) {
		if (vt_is_legacy_prefix(bytes[i])) {
			lock |= bytes[i] == 0xf0;
			rex = 0;
		} else if ((bytes[i] & 0xf0) == 0x40) {
			rex = bytes[i];
		} else {
			break;
		}
	}
	if (lock || i + 2 > n || i + 2 > VT_MAX_INSN_LEN || bytes[i] != 0x0f)
		return;
	if (bytes[i + 1] == 0x05)
		out->kind = VT_SYS_SYSCALL;
	else if (bytes[i + 1] == 0x07)
		out->kind = VT_SYS_SYSRET;
	out->len = i + 2;
	out->rex_w = rex & 0x08;
}

static void vt_load_flat_cs(u16 sel, u32 ar)
{
	vt_vmwrite(GUEST_CS_SELECTOR, sel);
	vt_vmwrite(GUEST_CS_BASE, 0);
	vt_vmwrite(GUEST_CS_LIMIT, VT_FLAT_LIMIT);
	vt_vmwrite(GUEST_CS_AR_BYTES, ar);
}

/* SS also sets the CPL: VMX keeps it in SS.DPL (SDM 3C 26.3.1.2). */
static void vt_load_flat_ss(u16 sel, u32 ar)
{
	vt_vmwrite(GUEST_SS_SELECTOR, sel);
	vt_vmwrite(GUEST_SS_BASE, 0);
	vt_vmwrite(GUEST_SS_LIMIT, VT_FLAT_LIMIT);
	vt_vmwrite(GUEST_SS_AR_BYTES, ar);
}

/*
 * What completing an instruction does besides its operation: STI/MOV-SS
 * blocking ends (SDM 3C 25.1.2), and a single-step trap follows if the new
 * RFLAGS.TF is set. That is how both instructions behave with TF: SYSCALL
 * masks TF through IA32_FMASK and traps nowhere, while a SYSRET that loads
 * TF = 1 traps right after it (Linux, arch/x86/entry/entry_64.S, avoids it
 * for that reason). VM entry delivers the trap from the pending-debug-
 * exceptions field (SDM 3C 27.7.3).
 */
static void vt_finish_insn(struct vt_exit *exit, u64 new_rflags)
{
	u64 intr = vt_vmread_or0(GUEST_INTERRUPTIBILITY_INFO);
	u64 pending = vt_vmread_or0(GUEST_PENDING_DBG_EXCEPTIONS) & ~(u64)DR6_BS;

	vt_vmwrite(GUEST_INTERRUPTIBILITY_INFO,
		   intr & ~(u64)(GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
	vt_vmwrite(GUEST_PENDING_DBG_EXCEPTIONS, pending | ((new_rflags & X86_EFLAGS_TF) ? DR6_BS : 0));
	exit->rip_advanced = true;
}

static bool vt_guest_cet(void)
{
	return (vt_vmread_or0(GUEST_CR4) & X86_CR4_CET) != 0;
}

/*
 * SYSCALL's CET steps (SDM Vol. 2B SYSCALL, "Operation"): from CPL 3 with
 * a user shadow stack, its SSP goes to IA32_PL3_SSP; at CPL 0 a kernel
 * shadow stack starts at SSP 0; with kernel IBT the ENDBRANCH tracker
 * waits for the ENDBR64 at the entry point.
 */
static void vt_syscall_cet(void)
{
	u64 s_cet = vt_vmread_or0(GUEST_S_CET);

	if (!vt_guest_cet())
		return;
	if (vt_rdmsr(MSR_IA32_U_CET) & CET_SHSTK_EN)
		vt_wrmsr(MSR_IA32_PL3_SSP, vt_vmread_or0(GUEST_SSP));
	if (s_cet & CET_SHSTK_EN)
		vt_vmwrite(GUEST_SSP, 0);
	if (s_cet & CET_ENDBR_EN)
		vt_vmwrite(GUEST_S_CET, (s_cet & ~CET_SUPPRESS) | CET_WAIT_ENDBR);
}

/* SYSRET's (SDM Vol. 2B SYSRET): back at CPL 3, the user shadow stack's SSP. */
static void vt_sysret_cet(void)
{
	if (vt_guest_cet() && (vt_rdmsr(MSR_IA32_U_CET) & CET_SHSTK_EN))
		vt_vmwrite(GUEST_SSP, vt_rdmsr(MSR_IA32_PL3_SSP));
}

void vt_emulate_syscall(struct vt_exit *exit, u32 len)
{
	struct vt_guest_regs *r = exit->regs;
	u64 star = vt_rdmsr(MSR_STAR);
	u16 cs = (u16)(star >> 32) & 0xfffc;
	/* RF is clear in the saved flags: the instruction completed. */
	u64 rflags = vt_vmread_or0(GUEST_RFLAGS) & ~X86_EFLAGS_RF;
	u64 new_rflags = (rflags & ~vt_rdmsr(MSR_SYSCALL_MASK)) | X86_EFLAGS_FIXED;

	r->rcx = vt_vmread_or0(GUEST_RIP) + len;
	r->r11 = rflags;
	vt_vmwrite(GUEST_RIP, vt_rdmsr(MSR_LSTAR));
	vt_vmwrite(GUEST_RFLAGS, new_rflags);
	vt_load_flat_cs(cs, VT_AR_CODE | VMX_AR_L_MASK);
	vt_load_flat_ss((u16)(cs + 8), VT_AR_DATA);
	vt_syscall_cet();
	vt_finish_insn(exit, new_rflags);
}

/* Canonical for the guest's paging mode (48 or 57 linear-address bits). */
static bool vt_guest_canonical(u64 addr)
{
	u32 bits = (vt_vmread_or0(GUEST_CR4) & X86_CR4_LA57) ? 57 : 48;

	return (u64)((s64)(addr << (64 - bits)) >> (64 - bits)) == addr;
}

bool vt_emulate_sysret(struct vt_exit *exit, bool rex_w)
{
	struct vt_guest_regs *r = exit->regs;
	u16 base = (u16)(vt_rdmsr(MSR_STAR) >> 48);
	u64 new_rflags = (r->r11 & VT_SYSRET_RFLAGS) | X86_EFLAGS_FIXED;

	if (vt_guest_cpl() != 0 || (rex_w && !vt_guest_canonical(r->rcx))) {
		vt_inject_gp0(exit);
		return false;
	}
	vt_vmwrite(GUEST_RIP, rex_w ? r->rcx : (u32)r->rcx);
	vt_vmwrite(GUEST_RFLAGS, new_rflags);
	if (rex_w)
		vt_load_flat_cs((u16)(base + 16) | 3, VT_AR_CODE | VT_AR_DPL3 | VMX_AR_L_MASK);
	else
		vt_load_flat_cs(base | 3, VT_AR_CODE | VT_AR_DPL3 | VMX_AR_DB_MASK);
	vt_load_flat_ss((u16)(base + 8) | 3, VT_AR_DATA | VT_AR_DPL3);
	vt_sysret_cet();
	vt_finish_insn(exit, new_rflags);
	return true;
}
