// SPDX-License-Identifier: GPL-2.0
/*
 * The syscall trap (syscall_trap.h): EFER.SCE cleared in the EFER VM entry loads
 * (SDM 3C 26.3.2.1, "load IA32_EFER"), #UD in the exception bitmap, and
 * EFER reads and writes in the MSR bitmap, all only while armed. Unarmed,
 * none of the three is set: no exit at all.
 */
#include "exit.h"
#include "intrin.h"
#include <vtice/vmcall.h>

/* EFER bits an Intel CPU implements (SDM Vol. 4 Table 2-2, IA32_EFER). */
#define VT_EFER_INTEL	(EFER_SCE | EFER_LME | EFER_LMA | EFER_NX)

bool vt_syscall_trap_can_arm(const struct vt_hv *hv, u64 guest_cr4)
{
	if (!(hv->ctls.entry & VM_ENTRY_LOAD_IA32_EFER))
		return false;
	/*
	 * With CET on, emulating SYSCALL and SYSRET moves the guest's SSP and
	 * its ENDBRANCH tracker (syscall_emul.c): both live in the VMCS only
	 * when the CPU switches CET state at VM entry and exit.
	 */
	return !(guest_cr4 & X86_CR4_CET) || (hv->ctls.entry & VM_ENTRY_LOAD_CET_STATE);
}

static int vt_syscall_arm(struct vt_vcpu *vcpu)
{
	u64 efer = vt_vmread_or0(GUEST_IA32_EFER);

	if (!vt_syscall_trap_can_arm(vcpu->hv, vt_vmread_or0(GUEST_CR4)))
		return -VT_EOPNOTSUPP;
	vcpu->sys.guest_sce = efer & EFER_SCE;
	vt_set_msr_intercept(vcpu, MSR_EFER, true);
	vt_vmwrite(GUEST_IA32_EFER, efer & ~EFER_SCE);
	vcpu->sys.armed = true;
	return vt_set_exception_intercept(X86_TRAP_UD, true);
}

static int vt_syscall_disarm(struct vt_vcpu *vcpu)
{
	u64 efer = vt_syscall_guest_efer(vcpu, vt_vmread_or0(GUEST_IA32_EFER));

	vt_vmwrite(GUEST_IA32_EFER, efer);
	vcpu->sys.armed = false;
	vt_set_msr_intercept(vcpu, MSR_EFER, false);
	if (vcpu->hv->ctls.exceptions & VT_BIT(X86_TRAP_UD))
		return 0;
	return vt_set_exception_intercept(X86_TRAP_UD, false);
}

/*
 * The filter changes only while every CPU is disarmed (the OS layer arms
 * once per owner), so a CPU that reads it in an event never sees it torn.
 */
int vt_syscall_trap_set(struct vt_vcpu *vcpu, bool on, bool quiet,
			const struct vt_sys_filter *filter)
{
	if (on == vcpu->sys.armed)
		return 0;
	if (!on)
		return vt_syscall_disarm(vcpu);
	vcpu->hv->sys_filter = *filter;
	vcpu->sys.quiet = quiet;
	vcpu->sys.by_stub = false;
	return vt_syscall_arm(vcpu);
}

int vt_syscall_trap_stub_set(struct vt_hv *hv, const struct vt_sys_stub_arm *arm)
{
	if (!arm && !hv->sys_stub.on)
		return 0;	/* never the kernel side's trap */
	if (arm && vt_syscall_strings_set(hv, arm->strings[0], arm->strings[1]) != VTICE_VMCALL_OK)
		return -VT_EINVAL;
	if (arm) {
		/* No CPU runs: none reads them torn. */
		hv->sys_filter = arm->filter;
		hv->sys_numbers = arm->numbers;
	}
	hv->sys_stub.on = arm != NULL;
	VT_STORE_RELEASE(hv->sys_stub.gen, hv->sys_stub.gen + 1);
	return 0;
}

void vt_syscall_trap_stub_sync(struct vt_vcpu *vcpu)
{
	const struct vt_sys_stub *want = &vcpu->hv->sys_stub;
	u32 gen = VT_LOAD_ACQUIRE(want->gen);

	if (vcpu->sys.stub_seen == gen)
		return;
	vcpu->sys.stub_seen = gen;
	vcpu->sys.by_stub = want->on;
	/*
	 * Armed already: a new run of the stub's, whose filter is in place.
	 * The stub checked that every CPU can arm (vt_syscall_trap_can_arm).
	 */
	if (want->on == vcpu->sys.armed)
		return;
	vcpu->sys.quiet = false;
	if (want->on)
		vt_syscall_arm(vcpu);
	else
		vt_syscall_disarm(vcpu);
}

bool vt_syscall_trap_kernel_armed(const struct vt_vcpu *vcpu)
{
	return vcpu->sys.armed && !vcpu->sys.by_stub;
}

u64 vt_syscall_guest_efer(const struct vt_vcpu *vcpu, u64 vmcs_efer)
{
	if (!vcpu->sys.armed)
		return vmcs_efer;
	return (vmcs_efer & ~EFER_SCE) | (vcpu->sys.guest_sce ? EFER_SCE : 0);
}

u64 vt_syscall_read_efer(const struct vt_vcpu *vcpu)
{
	return vt_syscall_guest_efer(vcpu, vt_vmread_or0(GUEST_IA32_EFER));
}

/*
 * WRMSR EFER while armed, judged as the CPU would (SDM Vol. 4, IA32_EFER;
 * Vol. 3A 10.8.5): reserved bits and a change of LME with paging on raise
 * #GP; LMA is read-only. The guest's SCE goes to the shadow.
 */
bool vt_syscall_write_efer(struct vt_vcpu *vcpu, u64 value)
{
	u64 cur = vt_vmread_or0(GUEST_IA32_EFER);

	if (value & ~VT_EFER_INTEL)
		return false;
	if (((value ^ cur) & EFER_LME) && (vt_vmread_or0(GUEST_CR0) & X86_CR0_PG))
		return false;
	vcpu->sys.guest_sce = value & EFER_SCE;
	vt_vmwrite(GUEST_IA32_EFER, (value & ~(EFER_SCE | EFER_LMA)) | (cur & EFER_LMA));
	return true;
}

/* A SYSCALL or SYSRET the trap executed: the event, then the callback. */
static void vt_syscall_executed(struct vt_exit *exit, enum vt_sys_edge edge, u64 from_rip)
{
	struct vt_vcpu *vcpu = exit->vcpu;
	const struct vt_callbacks *cb = vcpu->hv->cb;

	vcpu->counts->syscalls_seen++;
	if (!vcpu->sys.quiet)
		vt_syscall_event(vcpu, exit->regs, edge);
	if (cb && cb->syscall)
		cb->syscall(vcpu, exit, edge, from_rip);
}

bool vt_syscall_trap_on_ud(struct vt_exit *exit)
{
	struct vt_vcpu *vcpu = exit->vcpu;
	u64 rip = vt_vmread_or0(GUEST_RIP);
	struct vt_sys_insn insn;
	u8 bytes[15];
	int n;

	/*
	 * With SCE clear in its own view, the guest gets the #UD it asked for;
	 * outside 64-bit mode SYSCALL/SYSRET are #UD on Intel anyway.
	 */
	if (!vcpu->sys.guest_sce || !vt_guest_in_64bit_mode())
		return false;
	n = vt_own_mem(vcpu, rip, bytes, sizeof(bytes), false);
	if (n <= 0)
		return false;
	vt_sys_decode(bytes, (u32)n, &insn);
	if (insn.kind == VT_SYS_SYSCALL) {
		vt_emulate_syscall(exit, insn.len);
		vt_syscall_executed(exit, VT_SYS_ENTER, rip);
		return true;
	}
	if (insn.kind == VT_SYS_SYSRET) {
		/* The task and RAX are the same before and after. */
		if (vt_emulate_sysret(exit, insn.rex_w))
			vt_syscall_executed(exit, VT_SYS_EXIT, rip);
		return true;
	}
	return false;
}
