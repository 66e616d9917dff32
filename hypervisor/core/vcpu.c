// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU bring-up and teardown ("blue pill"): VMXON, VMCS, VMLAUNCH into
 * the running kernel; and the way back: VMCALL, restore, VMXOFF.
 * Every step of bring-up that fails undoes the steps before it, so a CPU is
 * either fully virtualized or exactly as it was.
 */
#include "exit.h"
#include "intrin.h"
#include "os.h"
#include <vtice/vmcall.h>

static void vt_msr_bitmap_update(u8 *bitmap, u32 msr, bool on)
{
	u32 read_off = MSR_BITMAP_READ_LOW, write_off = MSR_BITMAP_WRITE_LOW;
	u8 bit = (u8)(1u << (msr % 8));

	if (msr >= MSR_BITMAP_HIGH_BASE) {
		msr -= MSR_BITMAP_HIGH_BASE;
		read_off = MSR_BITMAP_READ_HIGH;
		write_off = MSR_BITMAP_WRITE_HIGH;
	}
	if (msr >= MSR_BITMAP_RANGE)
		return;		/* outside the bitmap: such MSRs always exit */
	if (on) {
		bitmap[read_off + msr / 8] |= bit;
		bitmap[write_off + msr / 8] |= bit;
	} else {
		bitmap[read_off + msr / 8] &= (u8)~bit;
		bitmap[write_off + msr / 8] &= (u8)~bit;
	}
}

static void vt_msr_bitmap_set(u8 *bitmap, u32 msr)
{
	vt_msr_bitmap_update(bitmap, msr, true);
}

/*
 * Reads and writes of msr exit (on) or run natively (off) on this vCPU.
 * The bitmap is read by the CPU at each RDMSR/WRMSR (SDM 3C 25.1.3), so a
 * change takes effect at the next one.
 */
void vt_set_msr_intercept(struct vt_vcpu *vcpu, u32 msr, bool on)
{
	vt_msr_bitmap_update(vcpu->msr_bitmap, msr, on);
}

/* At first only DEBUGCTL exits (exit_msr.c); features switch others as they need them. */
static void vt_msr_bitmap_init(u8 *bitmap)
{
	vt_msr_bitmap_set(bitmap, MSR_IA32_DEBUGCTLMSR);
}

int vt_vcpu_alloc(struct vt_hv *hv, struct vt_vcpu *vcpu, u32 cpu)
{
	vt_memset(vcpu, 0, sizeof(*vcpu));
	vcpu->hv = hv;
	vcpu->cpu = cpu;
	vcpu->vpid = (u16)(cpu + 1);	/* VPID 0 is the host's (SDM 3C 29.1) */
	vcpu->vmxon_region = vt_os_alloc_pages(1);
	vcpu->vmcs = vt_os_alloc_pages(1);
	vcpu->msr_bitmap = vt_os_alloc_pages(1);
	vcpu->stack = vt_os_alloc_pages(VT_HOST_STACK_PAGES);
	vcpu->counts = vt_os_alloc_pages(1);
	vcpu->host_gdt = vt_os_alloc_pages(1);
	if (!vcpu->vmxon_region || !vcpu->vmcs || !vcpu->msr_bitmap || !vcpu->stack ||
	    !vcpu->counts || !vcpu->host_gdt) {
		vt_vcpu_free(vcpu);
		return -VT_ENOMEM;
	}
	/* Root's handlers find the vCPU from RSP (root_idt.h). */
	if ((u64)vcpu->stack & (VT_HOST_STACK_PAGES * VT_PAGE_SIZE - 1)) {
		vt_vcpu_free(vcpu);
		return -VT_EINVAL;
	}
	vt_msr_bitmap_init(vcpu->msr_bitmap);
	return 0;
}

void vt_vcpu_free(struct vt_vcpu *vcpu)
{
	if (vcpu->vmxon_region)
		vt_os_free_pages(vcpu->vmxon_region, 1);
	if (vcpu->vmcs)
		vt_os_free_pages(vcpu->vmcs, 1);
	if (vcpu->msr_bitmap)
		vt_os_free_pages(vcpu->msr_bitmap, 1);
	if (vcpu->stack)
		vt_os_free_pages(vcpu->stack, VT_HOST_STACK_PAGES);
	if (vcpu->counts)
		vt_os_free_pages(vcpu->counts, 1);
	if (vcpu->host_gdt)
		vt_os_free_pages(vcpu->host_gdt, 1);
	vcpu->vmxon_region = NULL;
	vcpu->vmcs = NULL;
	vcpu->msr_bitmap = NULL;
	vcpu->stack = NULL;
	vcpu->counts = NULL;
	vcpu->host_gdt = NULL;
}

int vt_vcpu_shield(struct vt_vcpu *vcpu)
{
	int ret = vt_hv_hide(vcpu->hv, vcpu->vmxon_region, 1);

	if (!ret)
		ret = vt_hv_hide(vcpu->hv, vcpu->vmcs, 1);
	if (!ret)
		ret = vt_hv_hide(vcpu->hv, vcpu->msr_bitmap, 1);
	if (!ret)
		ret = vt_hv_hide(vcpu->hv, vcpu->stack, VT_HOST_STACK_PAGES);
	if (!ret)
		ret = vt_hv_hide(vcpu->hv, vcpu->host_gdt, 1);
	if (!ret)
		ret = vt_hv_copy(vcpu->hv, vcpu, VT_VCPU_PAGES);
	return ret;
}

/* CR0/CR4 must satisfy IA32_VMX_CRn_FIXED0/1 before VMXON (SDM 3C 24.8). */
static int vt_check_fixed_bits(struct vt_vcpu *vcpu, u64 cr4)
{
	const struct vt_vmx_caps *c = &vcpu->hv->caps;
	u64 cr0 = vt_read_cr0();

	if (!vt_cr_fixed_ok(cr0, c->cr0_fixed0, c->cr0_fixed1) ||
	    !vt_cr_fixed_ok(cr4, c->cr4_fixed0, c->cr4_fixed1)) {
		vt_err("cpu %u: CR0 0x%llx / CR4 0x%llx violate VMX fixed bits\n",
		       vcpu->cpu, cr0, cr4);
		return -VT_EIO;
	}
	return 0;
}

static void vt_invalidate_all(struct vt_vcpu *vcpu)
{
	const struct vt_hv *hv = vcpu->hv;

	if (hv->caps.ept_vpid & VMX_EPT_EXTENT_GLOBAL_BIT)
		vt_invept(VMX_EPT_EXTENT_GLOBAL, 0);
	else if (hv->caps.ept_vpid & VMX_EPT_EXTENT_CONTEXT_BIT)
		vt_invept(VMX_EPT_EXTENT_CONTEXT, hv->ept.eptp);
	if (hv->ctls.proc2 & SECONDARY_EXEC_ENABLE_VPID)
		vt_invvpid(VMX_VPID_EXTENT_SINGLE_CONTEXT, vcpu->vpid, 0);
}

static u32 vt_vm_error(void)
{
	u64 err = 0;

	vt_vmread(VM_INSTRUCTION_ERROR, &err);
	return (u32)err;
}

static int vt_enter_vmx(struct vt_vcpu *vcpu)
{
	u32 rev = (u32)(vcpu->hv->caps.basic & VMX_BASIC_REVISION_MASK);
	u64 vmxon_pa = vt_os_virt_to_phys(vcpu->vmxon_region);
	u64 vmcs_pa = vt_os_virt_to_phys(vcpu->vmcs);
	int status;

	/* Both regions start with the VMCS revision identifier (SDM 3C 24.2, 24.11.5). */
	*(u32 *)vcpu->vmxon_region = rev;
	*(u32 *)vcpu->vmcs = rev;
	status = vt_vmxon(vmxon_pa);
	if (status != VT_VMX_OK) {
		/* VMfailInvalid here usually means someone else is in VMX operation. */
		vt_err("cpu %u: VMXON failed (%s)\n", vcpu->cpu,
		       status == VT_VMX_FAULT ? "it faulted: a hypervisor below the kernel holds VMX, another "
						"VMM or a vtice loaded with stealth=1" :
		       status == VT_VMX_FAIL_INVALID ? "VMfailInvalid: VMX busy or bad region" : "VMfailValid");
		return -VT_EBUSY;
	}
	vcpu->vmxon_done = true;
	if (vt_vmclear(vmcs_pa) != VT_VMX_OK || vt_vmptrld(vmcs_pa) != VT_VMX_OK) {
		vcpu->last_vm_error = vt_vm_error();
		vt_err("cpu %u: VMCLEAR/VMPTRLD failed (error %u)\n", vcpu->cpu,
		       vcpu->last_vm_error);
		return -VT_EIO;
	}
	return 0;
}

static void vt_exit_vmx(struct vt_vcpu *vcpu)
{
	if (!vcpu->vmxon_done)
		return;
	vt_vmclear(vt_os_virt_to_phys(vcpu->vmcs));
	vt_vmxoff();
	vcpu->vmxon_done = false;
}

int vt_vcpu_virtualize(struct vt_vcpu *vcpu)
{
	int ret;

	ret = vt_check_feature_control();
	if (ret)
		return ret;
	vcpu->cr4_before = vt_read_cr4();
	/*
	 * CR4.VMXE already set: another hypervisor did VMXON on this CPU (VMXON
	 * needs it, and the kernel sets it for nothing else). KVM does so
	 * when kvm_intel loads since Linux 6.12, not only while a VM runs.
	 */
	if (vcpu->cr4_before & X86_CR4_VMXE) {
		vt_err("cpu %u: another hypervisor holds VMX (CR4.VMXE is set); for KVM: "
		       "rmmod kvm_intel, or boot with kvm.enable_virt_at_load=0\n", vcpu->cpu);
		return -VT_EBUSY;
	}
	ret = vt_check_fixed_bits(vcpu, vcpu->cr4_before | X86_CR4_VMXE);
	if (ret)
		return ret;
	vcpu->debugctl_shadow = vt_rdmsr(MSR_IA32_DEBUGCTLMSR);
	vt_apic_read_id(vcpu);
	/*
	 * A fresh VMCS is not armed (a trap armed before a hotplug or suspend)
	 * and does not sample (timer.c); what the debug stub armed is applied
	 * again as this CPU leaves its next stop.
	 */
	vcpu->sys.armed = false;
	vcpu->sys.stub_seen = 0;
	vcpu->profile.stub_seen = 0;
	vt_set_msr_intercept(vcpu, MSR_EFER, false);
	/* Without "save IA32_PERF_GLOBAL_CTRL", its writes must reach the VMCS. */
	vt_set_msr_intercept(vcpu, MSR_CORE_PERF_GLOBAL_CTRL,
			     (vcpu->hv->ctls.entry & VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL) &&
			     !(vcpu->hv->ctls.exit & VM_EXIT_SAVE_IA32_PERF_GLOBAL_CTRL));
	vt_write_cr4(vcpu->cr4_before | X86_CR4_VMXE);
	ret = vt_enter_vmx(vcpu);
	if (ret)
		goto err_vmx;
	ret = vt_vmcs_setup(vcpu);
	if (ret)
		goto err_vmx;
	/* A CPU that comes online after a stop takes the others' offset. */
	vt_tsc_hide_apply(vcpu);
	vt_invalidate_all(vcpu);
	/*
	 * Set on both sides of the launch: before it, still bare, in the
	 * original VMX root reads (the debugger's all-stop); after it, as a
	 * guest, in the kernel's copy when the shield gave it one (shield.h).
	 */
	vcpu->launched = true;
	ret = vt_vmx_launch();
	if (ret) {
		vcpu->launched = false;
		vcpu->last_vm_error = vt_vm_error();
		vt_err("cpu %u: VMLAUNCH failed (stub %d, VM-instruction error %u)\n",
		       vcpu->cpu, ret, vcpu->last_vm_error);
		ret = -VT_EIO;
		goto err_vmx;
	}
	/* From here on this CPU runs as a guest. */
	vcpu->launched = true;
	return 0;
err_vmx:
	vt_exit_vmx(vcpu);
	vt_write_cr4(vcpu->cr4_before);
	return ret;
}

int vt_vcpu_devirtualize(struct vt_vcpu *vcpu)
{
	u64 status;

	if (!vcpu->launched)
		return 0;
	status = vt_vmcall(VTICE_VMCALL_DEVIRTUALIZE, vcpu->hv->key, 0, 0, 0, 0, NULL);
	return status == VTICE_VMCALL_OK ? 0 : -VT_EIO;
}

u64 vt_vcpu_emit_test(struct vt_vcpu *vcpu, u32 count, u64 value, u64 *stored)
{
	return vt_vmcall(VTICE_VMCALL_EMIT_TEST, vcpu->hv->key, count, value, 0, 0, stored);
}

u64 vt_vcpu_vmcall(struct vt_vcpu *vcpu, u64 func, u64 arg, u64 *out)
{
	return vt_vmcall(func, vcpu->hv->key, arg, 0, 0, 0, out);
}

u64 vt_vcpu_syscalls(struct vt_vcpu *vcpu, bool on, bool quiet, u32 pid, const char comm[16])
{
	u64 c[2], mode = on ? VTICE_VMCALL_SYSCALLS_ON | (quiet ? VTICE_VMCALL_SYSCALLS_QUIET : 0) : 0;

	vt_memcpy(c, comm, sizeof(c));
	return vt_vmcall(VTICE_VMCALL_SYSCALLS, vcpu->hv->key, mode, pid, c[0], c[1], NULL);
}

u64 vt_vcpu_syscall_strings(struct vt_vcpu *vcpu, u64 slots_lo, u64 slots_hi)
{
	return vt_vmcall(VTICE_VMCALL_SYSCALL_STRINGS, vcpu->hv->key, slots_lo, slots_hi, 0, 0, NULL);
}

u64 vt_vcpu_syscall_numbers(struct vt_vcpu *vcpu, u64 word, u64 bits)
{
	return vt_vmcall(VTICE_VMCALL_SYSCALL_NUMBERS, vcpu->hv->key, word, bits, 0, 0, NULL);
}

u64 vt_vcpu_path_trace(struct vt_vcpu *vcpu, u32 op, u64 a, u64 b, u64 c, u64 *traced)
{
	return vt_vmcall(VTICE_VMCALL_PATH_TRACE, vcpu->hv->key, op, a, b, c, traced);
}

u64 vt_vcpu_probes(struct vt_vcpu *vcpu, u32 op, u64 a, u64 b, u64 c, u64 *hits)
{
	return vt_vmcall(VTICE_VMCALL_PROBES, vcpu->hv->key, op, a, b, c, hits);
}

u64 vt_vcpu_profile(struct vt_vcpu *vcpu, u64 period_tsc, u32 stack_bytes, u32 pid, const char comm[16],
		    u64 *samples)
{
	u64 c[2];

	vt_memcpy(c, comm, sizeof(c));
	return vt_vmcall(VTICE_VMCALL_PROFILE, vcpu->hv->key, period_tsc, stack_bytes | (u64)pid << 32, c[0],
			 c[1], samples);
}

/* Guest state that VM exits changed and the kernel expects back. */
struct vt_leave_state {
	struct vt_desc_ptr gdt, idt;
	u64 cr0, cr3, cr4, dr7, fs_base, gs_base, pat, efer;
	u64 sysenter_cs, sysenter_esp, sysenter_eip;
	u64 perf_global, s_cet, int_ssp_tab;	/* when the controls switch them */
	u16 ds, es, fs, gs, ss;
};

static void vt_leave_read(struct vt_vcpu *vcpu, struct vt_leave_state *s,
			  struct vt_guest_regs *regs)
{
	const struct vt_controls *c = &vcpu->hv->ctls;

	regs->rip = vt_vmread_or0(GUEST_RIP);
	regs->rsp = vt_vmread_or0(GUEST_RSP);
	regs->rflags = vt_vmread_or0(GUEST_RFLAGS);
	s->gdt.base = vt_vmread_or0(GUEST_GDTR_BASE);
	s->gdt.limit = (u16)vt_vmread_or0(GUEST_GDTR_LIMIT);
	s->idt.base = vt_vmread_or0(GUEST_IDTR_BASE);
	s->idt.limit = (u16)vt_vmread_or0(GUEST_IDTR_LIMIT);
	s->cr0 = vt_guest_cr0();
	s->cr3 = vt_vmread_or0(GUEST_CR3);
	s->cr4 = vt_guest_cr4();
	s->dr7 = vt_vmread_or0(GUEST_DR7);
	s->fs_base = vt_vmread_or0(GUEST_FS_BASE);
	s->gs_base = vt_vmread_or0(GUEST_GS_BASE);
	s->sysenter_cs = vt_vmread_or0(GUEST_SYSENTER_CS);
	s->sysenter_esp = vt_vmread_or0(GUEST_SYSENTER_ESP);
	s->sysenter_eip = vt_vmread_or0(GUEST_SYSENTER_EIP);
	s->pat = (c->exit & VM_EXIT_SAVE_IA32_PAT) ? vt_vmread_or0(GUEST_IA32_PAT) :
						     vt_rdmsr(MSR_IA32_CR_PAT);
	s->efer = (c->exit & VM_EXIT_SAVE_IA32_EFER) ?
		  vt_syscall_guest_efer(vcpu, vt_vmread_or0(GUEST_IA32_EFER)) : vt_rdmsr(MSR_EFER);
	if (c->entry & VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL)
		s->perf_global = vt_vmread_or0(GUEST_IA32_PERF_GLOBAL_CTRL);
	if (c->entry & VM_ENTRY_LOAD_CET_STATE) {
		s->s_cet = vt_vmread_or0(GUEST_S_CET);
		s->int_ssp_tab = vt_vmread_or0(GUEST_INTR_SSP_TABLE);
	}
	s->ds = (u16)vt_vmread_or0(GUEST_DS_SELECTOR);
	s->es = (u16)vt_vmread_or0(GUEST_ES_SELECTOR);
	s->fs = (u16)vt_vmread_or0(GUEST_FS_SELECTOR);
	s->gs = (u16)vt_vmread_or0(GUEST_GS_SELECTOR);
	s->ss = (u16)vt_vmread_or0(GUEST_SS_SELECTOR);
}

static void vt_wrmsr_if_changed(u32 msr, u64 value)
{
	if (vt_rdmsr(msr) != value)
		vt_wrmsr(msr, value);
}

/*
 * A VM exit loaded the host state, which differs from the kernel's in:
 * CR3 (our own PML4), GDTR/IDTR (root's, limits 0xFFFF, SDM 3C 28.5.2), DR7
 * (0x400), DEBUGCTL (0), null DS/ES/FS/GS, FS/GS bases, the switched
 * PERF_GLOBAL_CTRL, S_CET and SSP table (0), and TR's limit (0x67; TR is
 * reloaded by the OS layer last). After VMXOFF, put the rest
 * back (GDTR and IDTR went back before it, vt_vcpu_leave_vmx).
 */
static void vt_leave_restore(struct vt_vcpu *vcpu, const struct vt_leave_state *s)
{
	/*
	 * The guest's INVLPGs only invalidated its own VPID (SDM 3C 28.3.3.1),
	 * so VPID 0 may still cache kernel translations, global ones included,
	 * that the kernel has since changed. Toggling CR4.PGE flushes every TLB
	 * entry for every PCID (SDM 3A 4.10.4.1) before the kernel runs bare.
	 */
	vt_write_cr4(s->cr4 ^ X86_CR4_PGE);
	vt_write_cr4(s->cr4);
	vt_write_cr3(s->cr3);
	vt_write_cr0(s->cr0);
	vt_write_ss(s->ss);
	if (s->ds)
		vt_write_ds(s->ds);
	if (s->es)
		vt_write_es(s->es);
	/* A selector load rewrites the base: load selectors first, then bases. */
	if (s->fs)
		vt_write_fs(s->fs);
	if (s->gs)
		vt_write_gs(s->gs);
	vt_wrmsr(MSR_FS_BASE, s->fs_base);
	vt_wrmsr(MSR_GS_BASE, s->gs_base);
	vt_write_dr7(s->dr7);
	vt_wrmsr(MSR_IA32_DEBUGCTLMSR, vcpu->debugctl_shadow);
	vt_wrmsr_if_changed(MSR_IA32_SYSENTER_CS, s->sysenter_cs);
	vt_wrmsr_if_changed(MSR_IA32_SYSENTER_ESP, s->sysenter_esp);
	vt_wrmsr_if_changed(MSR_IA32_SYSENTER_EIP, s->sysenter_eip);
	vt_wrmsr_if_changed(MSR_IA32_CR_PAT, s->pat);
	vt_wrmsr_if_changed(MSR_EFER, s->efer);
	/*
	 * VM exits loaded root's 0 into these (vmx_caps.c): without them back,
	 * the kernel's perf counters stay off, and with S_CET 0 its IBT (found
	 * by tests/transparency on Sapphire Rapids). S_CET last: after it only
	 * code built for the kernel's IBT (force_reload_TR) and the exit
	 * stub's POPF and RET run, no indirect branch of root's.
	 */
	if (vcpu->hv->ctls.entry & VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL)
		vt_wrmsr(MSR_CORE_PERF_GLOBAL_CTRL, s->perf_global);
	if (vcpu->hv->ctls.entry & VM_ENTRY_LOAD_CET_STATE) {
		vt_wrmsr(MSR_IA32_INT_SSP_TAB, s->int_ssp_tab);
		vt_wrmsr(MSR_IA32_S_CET, s->s_cet);
	}
}

void vt_vcpu_leave_vmx(struct vt_vcpu *vcpu, struct vt_guest_regs *regs)
{
	struct vt_leave_state s;

	vt_lbr_view_release(vcpu);
	/* Here, not after the VMCALL: the kernel's copy of vcpu is not root's. */
	vt_tsc_hide_release(vcpu);
	vt_leave_read(vcpu, &s, regs);
	/*
	 * The kernel's tables first: root's NMI handler writes the VMCS, which
	 * VMXOFF takes away. An NMI from here on is the kernel's to handle; one
	 * root noted and did not take yet (vcpu->root_nmi) is dropped.
	 */
	vt_lgdt(&s.gdt);
	vt_lidt(&s.idt);
	vt_invalidate_all(vcpu);
	vt_exit_vmx(vcpu);
	vt_leave_restore(vcpu, &s);
	/* After GS is the kernel's again: the OS finds its GDT through it. */
	vt_os_reload_tr();
	vcpu->launched = false;
}
