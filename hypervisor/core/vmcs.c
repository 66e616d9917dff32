// SPDX-License-Identifier: GPL-2.0
/*
 * VMCS contents for blue-pilling the running kernel: the guest-state area
 * is the live CPU state (so the guest continues exactly where the launch
 * stub left off), the host-state area is the same kernel context with our
 * own stack and RIP (SDM Vol. 3C 24.4, 24.5, 26.2-26.3 for the checks).
 */
#include "hv.h"
#include "intrin.h"
#include "os.h"
#include "root_idt.h"
#include "segment.h"
#include <vtice/ioctl.h>

struct vt_vmcs_writer {
	int err;
	u64 field;
};

static void vt_w(struct vt_vmcs_writer *w, u64 field, u64 value)
{
	if (w->err)
		return;
	if (vt_vmwrite(field, value) != VT_VMX_OK) {
		w->err = -VT_EIO;
		w->field = field;
	}
}

static void vt_vmcs_guest_segment(struct vt_vmcs_writer *w, const struct vt_desc_ptr *gdt,
				  int idx, u16 sel)
{
	struct vt_segment seg;

	vt_segment_read(gdt, sel, &seg);
	if (seg.ar & VMX_AR_UNUSABLE_MASK)	/* keep the RPL as DPL: CPL = SS.DPL */
		seg.ar |= (sel & 3u) << VMX_AR_DPL_SHIFT;
	if (idx == VT_SEG_FS)
		seg.base = vt_rdmsr(MSR_FS_BASE);
	if (idx == VT_SEG_GS)
		seg.base = vt_rdmsr(MSR_GS_BASE);
	vt_w(w, GUEST_ES_SELECTOR + 2 * idx, seg.sel);
	vt_w(w, GUEST_ES_LIMIT + 2 * idx, seg.limit);
	vt_w(w, GUEST_ES_AR_BYTES + 2 * idx, seg.ar);
	vt_w(w, GUEST_ES_BASE + 2 * idx, seg.base);
}

static void vt_vmcs_guest_segments(struct vt_vmcs_writer *w, const struct vt_desc_ptr *gdt)
{
	vt_vmcs_guest_segment(w, gdt, VT_SEG_ES, vt_read_es());
	vt_vmcs_guest_segment(w, gdt, VT_SEG_CS, vt_read_cs());
	vt_vmcs_guest_segment(w, gdt, VT_SEG_SS, vt_read_ss());
	vt_vmcs_guest_segment(w, gdt, VT_SEG_DS, vt_read_ds());
	vt_vmcs_guest_segment(w, gdt, VT_SEG_FS, vt_read_fs());
	vt_vmcs_guest_segment(w, gdt, VT_SEG_GS, vt_read_gs());
	vt_vmcs_guest_segment(w, gdt, VT_SEG_LDTR, vt_sldt());
	vt_vmcs_guest_segment(w, gdt, VT_SEG_TR, vt_str());
}

/* Everything but RSP/RIP, which the launch stub writes itself. */
static void vt_vmcs_guest(struct vt_vmcs_writer *w, const struct vt_controls *ctls)
{
	struct vt_desc_ptr gdt, idt;

	vt_sgdt(&gdt);
	vt_sidt(&idt);
	vt_vmcs_guest_segments(w, &gdt);
	vt_w(w, GUEST_GDTR_BASE, gdt.base);
	vt_w(w, GUEST_GDTR_LIMIT, gdt.limit);
	vt_w(w, GUEST_IDTR_BASE, idt.base);
	vt_w(w, GUEST_IDTR_LIMIT, idt.limit);
	vt_w(w, GUEST_CR0, vt_read_cr0());
	vt_w(w, GUEST_CR3, vt_read_cr3());
	vt_w(w, GUEST_CR4, vt_read_cr4());
	vt_w(w, GUEST_DR7, vt_read_dr7());
	vt_w(w, GUEST_RFLAGS, vt_read_rflags());
	vt_w(w, GUEST_IA32_DEBUGCTL, vt_rdmsr(MSR_IA32_DEBUGCTLMSR));
	vt_w(w, GUEST_SYSENTER_CS, vt_rdmsr(MSR_IA32_SYSENTER_CS));
	vt_w(w, GUEST_SYSENTER_ESP, vt_rdmsr(MSR_IA32_SYSENTER_ESP));
	vt_w(w, GUEST_SYSENTER_EIP, vt_rdmsr(MSR_IA32_SYSENTER_EIP));
	/*
	 * KERNEL_GS_BASE, STAR/LSTAR and the like are not in the guest-state
	 * area: VM entries and exits leave them alone, so the guest keeps the
	 * live values (SDM 3C 24.4). DEBUGCTL, PAT and EFER are switched.
	 */
	if (ctls->entry & VM_ENTRY_LOAD_IA32_PAT)
		vt_w(w, GUEST_IA32_PAT, vt_rdmsr(MSR_IA32_CR_PAT));
	if (ctls->entry & VM_ENTRY_LOAD_IA32_EFER)
		vt_w(w, GUEST_IA32_EFER, vt_rdmsr(MSR_EFER));
	if (ctls->entry & VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL)
		vt_w(w, GUEST_IA32_PERF_GLOBAL_CTRL, vt_rdmsr(MSR_CORE_PERF_GLOBAL_CTRL));
	/*
	 * The kernel's own CET state. It has no supervisor shadow stack (Linux
	 * keeps shadow stacks for user mode), so its SSP is meaningless here:
	 * 0, which the entry checks accept (SDM 3C 27.3.1.1).
	 */
	if (ctls->entry & VM_ENTRY_LOAD_CET_STATE) {
		vt_w(w, GUEST_S_CET, vt_rdmsr(MSR_IA32_S_CET));
		vt_w(w, GUEST_SSP, 0);
		vt_w(w, GUEST_INTR_SSP_TABLE, vt_rdmsr(MSR_IA32_INT_SSP_TAB));
	}
	vt_w(w, GUEST_INTERRUPTIBILITY_INFO, 0);
	vt_w(w, GUEST_ACTIVITY_STATE, 0);
	vt_w(w, GUEST_PENDING_DBG_EXCEPTIONS, 0);
	/* No shadow VMCS: the link pointer must be all ones (26.3.1.5). */
	vt_w(w, VMCS_LINK_POINTER, ~0ull);
}

static void vt_vmcs_host(struct vt_vmcs_writer *w, struct vt_vcpu *vcpu)
{
	const struct vt_controls *ctls = &vcpu->hv->ctls;
	struct vt_desc_ptr gdt;
	struct vt_segment tr;
	u64 rsp;

	vt_sgdt(&gdt);
	vt_segment_read(&gdt, vt_str(), &tr);
	/* Host selectors need RPL = TI = 0 (26.2.3); DS..GS may be null. */
	vt_w(w, HOST_CS_SELECTOR, vt_read_cs() & ~SEG_SELECTOR_RPL_TI_MASK);
	vt_w(w, HOST_SS_SELECTOR, vt_read_ss() & ~SEG_SELECTOR_RPL_TI_MASK);
	vt_w(w, HOST_DS_SELECTOR, 0);
	vt_w(w, HOST_ES_SELECTOR, 0);
	vt_w(w, HOST_FS_SELECTOR, 0);
	vt_w(w, HOST_GS_SELECTOR, 0);
	vt_w(w, HOST_TR_SELECTOR, tr.sel & ~SEG_SELECTOR_RPL_TI_MASK);
	vt_w(w, HOST_TR_BASE, tr.base);
	vt_w(w, HOST_FS_BASE, vt_rdmsr(MSR_FS_BASE));
	vt_w(w, HOST_GS_BASE, vt_rdmsr(MSR_GS_BASE));
	/* Root's own tables: no kernel handler runs in root (root_idt.h). */
	vt_root_gdt_copy(vcpu);
	vt_w(w, HOST_GDTR_BASE, (u64)vcpu->host_gdt);
	vt_w(w, HOST_IDTR_BASE, (u64)vcpu->hv->root_idt);
	vt_w(w, HOST_CR0, vt_read_cr0());
	vt_w(w, HOST_CR3, vcpu->hv->host_cr3);
	vt_w(w, HOST_CR4, vt_read_cr4());
	vt_w(w, HOST_IA32_SYSENTER_CS, vt_rdmsr(MSR_IA32_SYSENTER_CS));
	vt_w(w, HOST_IA32_SYSENTER_ESP, vt_rdmsr(MSR_IA32_SYSENTER_ESP));
	vt_w(w, HOST_IA32_SYSENTER_EIP, vt_rdmsr(MSR_IA32_SYSENTER_EIP));
	if (ctls->exit & VM_EXIT_LOAD_IA32_PAT)
		vt_w(w, HOST_IA32_PAT, vt_rdmsr(MSR_IA32_CR_PAT));
	if (ctls->exit & VM_EXIT_LOAD_IA32_EFER)
		vt_w(w, HOST_IA32_EFER, vt_rdmsr(MSR_EFER));
	/* Root counts nothing on the kernel's counters, and runs without CET. */
	if (ctls->exit & VM_EXIT_LOAD_IA32_PERF_GLOBAL_CTRL)
		vt_w(w, HOST_IA32_PERF_GLOBAL_CTRL, 0);
	if (ctls->exit & VM_EXIT_LOAD_CET_STATE) {
		vt_w(w, HOST_S_CET, 0);
		vt_w(w, HOST_SSP, 0);
		vt_w(w, HOST_INTR_SSP_TABLE, 0);
	}
	/* The exit stub finds its vCPU just above the register frame. */
	rsp = (u64)(vcpu->stack + VT_HOST_STACK_PAGES * VT_PAGE_SIZE - 16);
	*(struct vt_vcpu **)rsp = vcpu;
	vt_w(w, HOST_RSP, rsp);
	vt_w(w, HOST_RIP, (u64)vt_vmexit_stub);
}

static void vt_vmcs_controls(struct vt_vmcs_writer *w, struct vt_vcpu *vcpu)
{
	const struct vt_hv *hv = vcpu->hv;
	const struct vt_controls *c = &hv->ctls;
	u64 cr4 = vt_read_cr4();

	vt_w(w, PIN_BASED_VM_EXEC_CONTROL, c->pin);
	vt_w(w, CPU_BASED_VM_EXEC_CONTROL, c->proc);
	vt_w(w, SECONDARY_VM_EXEC_CONTROL, c->proc2);
	vt_w(w, VM_EXIT_CONTROLS, c->exit);
	vt_w(w, VM_ENTRY_CONTROLS, c->entry);
	vt_w(w, EXCEPTION_BITMAP, c->exceptions);
	vt_w(w, PAGE_FAULT_ERROR_CODE_MASK, 0);
	vt_w(w, PAGE_FAULT_ERROR_CODE_MATCH, 0);
	vt_w(w, CR3_TARGET_COUNT, 0);
	vt_w(w, VM_EXIT_MSR_STORE_COUNT, 0);
	vt_w(w, VM_EXIT_MSR_LOAD_COUNT, 0);
	vt_w(w, VM_ENTRY_MSR_LOAD_COUNT, 0);
	vt_w(w, VM_ENTRY_INTR_INFO_FIELD, 0);
	vt_w(w, MSR_BITMAP, vt_os_virt_to_phys(vcpu->msr_bitmap));
	vt_w(w, EPT_POINTER, hv->ept.eptp);
	if (c->proc & CPU_BASED_USE_IO_BITMAPS) {
		vt_w(w, IO_BITMAP_A, vt_os_virt_to_phys(hv->io_bitmap));
		vt_w(w, IO_BITMAP_B, vt_os_virt_to_phys(hv->io_bitmap + VT_PAGE_SIZE));
	}
	if (c->pin & PIN_BASED_VMX_PREEMPTION_TIMER)
		vt_w(w, VMX_PREEMPTION_TIMER_VALUE, hv->preempt_ticks);
	vt_timer_init(vcpu);
	if (c->proc2 & SECONDARY_EXEC_ENABLE_VPID)
		vt_w(w, VIRTUAL_PROCESSOR_ID, vcpu->vpid);
	if (c->proc2 & SECONDARY_EXEC_XSAVES)
		vt_w(w, XSS_EXIT_BITMAP, 0);
	/*
	 * CR4.VMXE and CR0.NE must be 1 in VMX operation (IA32_VMX_CR4_FIXED0,
	 * CR0_FIXED0) but the kernel may clear or set them as on the bare CPU:
	 * own them and shadow them (SDM 3C 25.3, 26.3; exit_cr.c).
	 */
	vt_w(w, CR4_GUEST_HOST_MASK, X86_CR4_VMXE);
	vt_w(w, CR4_READ_SHADOW, cr4 & ~X86_CR4_VMXE);
	vt_w(w, CR0_GUEST_HOST_MASK, vt_cr0_owned(&vcpu->hv->caps));
	vt_w(w, CR0_READ_SHADOW, vt_read_cr0());
}

int vt_vmcs_setup(struct vt_vcpu *vcpu)
{
	struct vt_vmcs_writer w = { 0, 0 };
	u64 err = 0;

	vt_vmcs_controls(&w, vcpu);
	vt_vmcs_host(&w, vcpu);
	vt_vmcs_guest(&w, &vcpu->hv->ctls);
	if (w.err) {
		vt_vmread(VM_INSTRUCTION_ERROR, &err);
		vcpu->last_vm_error = (u32)err;
		vt_err("cpu %u: VMWRITE 0x%llx failed (VM-instruction error %llu)\n",
		       vcpu->cpu, w.field, err);
	}
	return w.err;
}
