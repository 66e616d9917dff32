// SPDX-License-Identifier: GPL-2.0
/*
 * VMX capability checks and VM-execution control computation.
 *
 * Each control MSR reports allowed 0-settings in bits 31:0 (a 1 there means
 * the control must be 1) and allowed 1-settings in bits 63:32 (a 0 there
 * means the control must be 0): SDM Vol. 3D A.3-A.5. When IA32_VMX_BASIC[55]
 * is set the TRUE_ MSRs must be used instead, because they may report
 * default-1 controls (e.g. CR3-load exiting) as clearable: SDM Vol. 3C
 * 31.5.1 "Algorithms for Determining VMX Capabilities".
 */
#include "hv.h"
#include "intrin.h"
#include "os.h"
#include <vtice/ioctl.h>

static int vt_read_feature_msrs(struct vt_vmx_caps *c)
{
	bool true_ctls;

	c->basic = vt_rdmsr(MSR_IA32_VMX_BASIC);
	true_ctls = c->basic & VMX_BASIC_TRUE_CTLS;
	c->pin = vt_rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_PINBASED_CTLS : MSR_IA32_VMX_PINBASED_CTLS);
	c->proc = vt_rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_PROCBASED_CTLS :
				       MSR_IA32_VMX_PROCBASED_CTLS);
	c->exit = vt_rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_EXIT_CTLS : MSR_IA32_VMX_EXIT_CTLS);
	c->entry = vt_rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_ENTRY_CTLS : MSR_IA32_VMX_ENTRY_CTLS);
	c->misc = vt_rdmsr(MSR_IA32_VMX_MISC);
	c->cr0_fixed0 = vt_rdmsr(MSR_IA32_VMX_CR0_FIXED0);
	c->cr0_fixed1 = vt_rdmsr(MSR_IA32_VMX_CR0_FIXED1);
	c->cr4_fixed0 = vt_rdmsr(MSR_IA32_VMX_CR4_FIXED0);
	c->cr4_fixed1 = vt_rdmsr(MSR_IA32_VMX_CR4_FIXED1);
	/* Secondary controls exist only if they can be activated (A.3.2). */
	c->proc2 = 0;
	if ((c->proc >> 32) & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS)
		c->proc2 = vt_rdmsr(MSR_IA32_VMX_PROCBASED_CTLS2);
	/* EPT/VPID capabilities exist only with EPT or VPID (A.10). */
	c->ept_vpid = 0;
	if ((c->proc2 >> 32) & (SECONDARY_EXEC_ENABLE_EPT | SECONDARY_EXEC_ENABLE_VPID))
		c->ept_vpid = vt_rdmsr(MSR_IA32_VMX_EPT_VPID_CAP);
	return true_ctls;
}

static u64 vt_caps_flags(const struct vt_vmx_caps *c, bool true_ctls)
{
	u32 proc1 = c->proc >> 32, proc2 = c->proc2 >> 32, pin1 = c->pin >> 32;
	u64 f = VTICE_CAP_VMX;

	if (true_ctls)
		f |= VTICE_CAP_TRUE_CTLS;
	if (proc2 & SECONDARY_EXEC_ENABLE_EPT) {
		f |= VTICE_CAP_EPT;
		f |= (c->ept_vpid & VMX_EPT_2MB_PAGE_BIT) ? VTICE_CAP_EPT_2M : 0;
		f |= (c->ept_vpid & VMX_EPT_1GB_PAGE_BIT) ? VTICE_CAP_EPT_1G : 0;
		f |= (c->ept_vpid & VMX_EPT_AD_BIT) ? VTICE_CAP_EPT_AD : 0;
		f |= (c->ept_vpid & VMX_EPT_EXECUTE_ONLY_BIT) ? VTICE_CAP_EPT_EXEC_ONLY : 0;
		f |= (c->ept_vpid & VMX_EPT_EXTENT_CONTEXT_BIT) ? VTICE_CAP_INVEPT_SINGLE : 0;
	}
	if ((proc2 & SECONDARY_EXEC_ENABLE_VPID) && (c->ept_vpid & VMX_VPID_INVVPID_BIT))
		f |= VTICE_CAP_VPID;
	f |= (proc1 & CPU_BASED_MONITOR_TRAP_FLAG) ? VTICE_CAP_MTF : 0;
	f |= (proc1 & CPU_BASED_USE_MSR_BITMAPS) ? VTICE_CAP_MSR_BITMAP : 0;
	f |= (pin1 & PIN_BASED_VMX_PREEMPTION_TIMER) ? VTICE_CAP_PREEMPT_TIMER : 0;
	f |= (proc2 & SECONDARY_EXEC_UNRESTRICTED_GUEST) ? VTICE_CAP_UNRESTRICTED : 0;
	return f;
}

/*
 * A VMX that offers to switch an MSR does not prove the MSR is there: a
 * parent hypervisor may hide the PMU or CET from its guest and still
 * advertise the controls. Reading the MSR is the proof.
 */
static u64 vt_probe_switched_msrs(void)
{
	u64 value, f = 0;

	if (!vt_rdmsr_safe(MSR_CORE_PERF_GLOBAL_CTRL, &value))
		f |= VTICE_CAP_PERF_GLOBAL;
	if (!vt_rdmsr_safe(MSR_IA32_S_CET, &value) && !vt_rdmsr_safe(MSR_IA32_INT_SSP_TAB, &value))
		f |= VTICE_CAP_CET;
	return f;
}

/* CPUID.1:ECX.VMX[5] says whether VMXON exists at all (SDM Vol. 3C 24.6). */
int vt_caps_read(struct vt_vmx_caps *caps)
{
	struct vt_cpuid_regs r;
	bool true_ctls;

	vt_memset(caps, 0, sizeof(*caps));
	vt_cpuid(1, 0, &r);
	if (!(r.ecx & CPUID_1_ECX_VMX)) {
		vt_err("CPU has no VMX (CPUID.1:ECX[5] clear)\n");
		return -VT_ENODEV;
	}
	true_ctls = vt_read_feature_msrs(caps);
	caps->flags = vt_caps_flags(caps, true_ctls) | vt_probe_switched_msrs();
	caps->preempt_timer_shift = caps->misc & VMX_MISC_PREEMPTION_TIMER_RATE_MASK;
	return 0;
}

int vt_adjust_controls(u64 cap_msr, u32 required, u32 optional, u32 *out)
{
	u32 must_be_1 = (u32)cap_msr;
	u32 may_be_1 = (u32)(cap_msr >> 32);

	if (must_be_1 & ~may_be_1)
		return -VT_EIO;		/* contradictory MSR: do not trust it */
	if (required & ~may_be_1)
		return -VT_EOPNOTSUPP;
	*out = (required | (optional & may_be_1) | must_be_1) & may_be_1;
	return 0;
}

/*
 * Controls that stop the guest from seeing #UD on instructions it already
 * uses natively: with these clear, RDTSCP/RDPID, INVPCID, XSAVES/XRSTORS and
 * UMWAIT/TPAUSE fault in VMX non-root (SDM Vol. 3C 26.3 / Table 25-7).
 */
#define VT_PROC2_KEEP_NATIVE (SECONDARY_EXEC_ENABLE_RDTSCP | SECONDARY_EXEC_ENABLE_INVPCID | \
			      SECONDARY_EXEC_XSAVES | SECONDARY_EXEC_ENABLE_USR_WAIT_PAUSE)
/*
 * Stealth against Intel PT: where offered, keep VMX out of the trace (no
 * PIP.NR/VMCS packets, no PSB+ on transitions; SDM 3C 26.5.x "Intel PT in
 * VMX", 24.6.2, 24.7.1, 24.8.1).
 */
#define VT_PROC2_STEALTH	SECONDARY_EXEC_PT_CONCEAL_VMX

/*
 * State that is the guest's in the guest and root's in root, where the CPU
 * can switch it (SDM 3C 25.7, 25.8; 28.3.2): CET (IA32_S_CET, SSP and the
 * interrupt SSP table: root runs without IBT or shadow stacks, whatever the
 * kernel set) and IA32_PERF_GLOBAL_CTRL (the kernel's counters stop in
 * root, so its PMU does not count the hypervisor's work).
 */
#define VT_EXIT_SWITCHED_STATE	(VM_EXIT_LOAD_CET_STATE | VM_EXIT_LOAD_IA32_PERF_GLOBAL_CTRL | \
				 VM_EXIT_SAVE_IA32_PERF_GLOBAL_CTRL)
#define VT_ENTRY_SWITCHED_STATE	(VM_ENTRY_LOAD_CET_STATE | VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL)

/* Each switch needs both halves and the MSRs themselves, or it is not used. */
static void vt_pair_switched_state(const struct vt_vmx_caps *caps, struct vt_controls *ctls)
{
	bool cet = (ctls->exit & VM_EXIT_LOAD_CET_STATE) && (ctls->entry & VM_ENTRY_LOAD_CET_STATE) &&
		   (caps->flags & VTICE_CAP_CET);
	bool perf = (ctls->exit & VM_EXIT_LOAD_IA32_PERF_GLOBAL_CTRL) &&
		    (ctls->entry & VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL) &&
		    (caps->flags & VTICE_CAP_PERF_GLOBAL);

	if (!cet) {
		ctls->exit &= ~VM_EXIT_LOAD_CET_STATE;
		ctls->entry &= ~VM_ENTRY_LOAD_CET_STATE;
	}
	if (!perf) {
		ctls->exit &= ~(VM_EXIT_LOAD_IA32_PERF_GLOBAL_CTRL | VM_EXIT_SAVE_IA32_PERF_GLOBAL_CTRL);
		ctls->entry &= ~VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL;
	}
}

static int vt_report(int ret, const char *what, u64 msr, u32 required)
{
	if (ret)
		vt_err("%s controls: cannot set 0x%x (allowed-1 0x%x, allowed-0 0x%x)\n",
		       what, required, (u32)(msr >> 32), (u32)msr);
	return ret;
}

/*
 * What vtice cannot run without, by name: a CPU that lacks one is refused
 * with a message a user can act on, before any control is computed
 * (allowed-1 settings, SDM Vol. 3D A.3).
 */
struct vt_required_feature {
	u8 msr;		/* 0 pin, 1 primary, 2 secondary processor-based */
	u32 bit;
	const char *name, *why;
};

static const struct vt_required_feature vt_required[] = {
	{ 1, CPU_BASED_ACTIVATE_SECONDARY_CONTROLS, "secondary processor-based controls",
	  "every VMX CPU since Nehalem (2008) has them" },
	{ 2, SECONDARY_EXEC_ENABLE_EPT, "EPT (extended page tables)",
	  "hidden breakpoints, watchpoints and the shield are EPT views" },
	{ 2, SECONDARY_EXEC_UNRESTRICTED_GUEST, "unrestricted guest",
	  "a CPU brought online starts in real mode, which only it can run" },
	{ 0, PIN_BASED_VIRTUAL_NMIS, "virtual NMIs",
	  "an NMI that arrives in VMX root must wait for an NMI window" },
	{ 1, CPU_BASED_NMI_WINDOW_EXITING, "NMI-window exiting",
	  "an NMI that arrives in VMX root must wait for an NMI window" },
	{ 1, CPU_BASED_USE_MSR_BITMAPS, "MSR bitmaps",
	  "without them every RDMSR and WRMSR would exit" },
};

static int vt_check_required(const struct vt_vmx_caps *caps)
{
	const u64 msrs[] = { caps->pin, caps->proc, caps->proc2 };
	u32 i;

	for (i = 0; i < VT_ARRAY_SIZE(vt_required); i++) {
		const struct vt_required_feature *f = &vt_required[i];

		if ((u32)(msrs[f->msr] >> 32) & f->bit)
			continue;
		vt_err("this CPU's VMX lacks %s, which vtice needs: %s\n", f->name, f->why);
		return -VT_EOPNOTSUPP;
	}
	/* Read only with secondary controls (checked first): SDM Vol. 3D A.10. */
	if (!(caps->ept_vpid & VMX_EPT_INVEPT_BIT) ||
	    !(caps->ept_vpid & (VMX_EPT_EXTENT_CONTEXT_BIT | VMX_EPT_EXTENT_GLOBAL_BIT))) {
		vt_err("this CPU's VMX lacks INVEPT, which vtice needs: "
		       "a changed EPT view must be flushed from the TLB\n");
		return -VT_EOPNOTSUPP;
	}
	return 0;
}

int vt_compute_controls(const struct vt_vmx_caps *caps, struct vt_controls *ctls)
{
	u32 req;
	int ret;

	ret = vt_check_required(caps);
	if (ret)
		return ret;

	/*
	 * Every NMI exits, with virtual NMIs so one can wait while the guest
	 * blocks NMIs, for an NMI window (SDM 3C 25.3, 26.7.1): an NMI that
	 * comes while the CPU is in VMX root is noted there and handed to the
	 * guest or the debugger through that window (root_idt.c).
	 */
	req = PIN_BASED_NMI_EXITING | PIN_BASED_VIRTUAL_NMIS;
	ret = vt_adjust_controls(caps->pin, req, 0, &ctls->pin);
	if (vt_report(ret, "pin-based", caps->pin, req))
		return ret;
	req = CPU_BASED_USE_MSR_BITMAPS | CPU_BASED_ACTIVATE_SECONDARY_CONTROLS;
	ret = vt_adjust_controls(caps->proc, req, 0, &ctls->proc);
	if (vt_report(ret, "primary processor-based", caps->proc, req))
		return ret;
	/* Unrestricted guest: after an INIT the guest runs in real mode (exit_init.c). */
	req = SECONDARY_EXEC_ENABLE_EPT | SECONDARY_EXEC_UNRESTRICTED_GUEST;
	ret = vt_adjust_controls(caps->proc2, req,
				 VT_PROC2_KEEP_NATIVE | VT_PROC2_STEALTH |
				 ((caps->flags & VTICE_CAP_VPID) ? SECONDARY_EXEC_ENABLE_VPID : 0),
				 &ctls->proc2);
	if (vt_report(ret, "secondary processor-based", caps->proc2, req))
		return ret;
	req = VM_EXIT_HOST_ADDR_SPACE_SIZE;
	ret = vt_adjust_controls(caps->exit, req,
				 VM_EXIT_SAVE_DEBUG_CONTROLS | VM_EXIT_SAVE_IA32_PAT |
				 VM_EXIT_LOAD_IA32_PAT | VM_EXIT_SAVE_IA32_EFER |
				 VM_EXIT_LOAD_IA32_EFER | VM_EXIT_PT_CONCEAL_PIP | VT_EXIT_SWITCHED_STATE,
				 &ctls->exit);
	if (vt_report(ret, "VM-exit", caps->exit, req))
		return ret;
	req = VM_ENTRY_IA32E_MODE;
	ret = vt_adjust_controls(caps->entry, req,
				 VM_ENTRY_LOAD_DEBUG_CONTROLS | VM_ENTRY_LOAD_IA32_PAT |
				 VM_ENTRY_LOAD_IA32_EFER | VM_ENTRY_PT_CONCEAL_PIP | VT_ENTRY_SWITCHED_STATE,
				 &ctls->entry);
	if (vt_report(ret, "VM-entry", caps->entry, req))
		return ret;
	vt_pair_switched_state(caps, ctls);
	/*
	 * Loading PAT/EFER on entry is only safe if the guest's value is also
	 * saved on exit; otherwise a guest WRMSR would be undone at the next
	 * VM entry. Keep the pair or neither (when the CPU lets us clear them).
	 */
	if (!(ctls->exit & VM_EXIT_SAVE_IA32_PAT) && !((u32)caps->entry & VM_ENTRY_LOAD_IA32_PAT))
		ctls->entry &= ~VM_ENTRY_LOAD_IA32_PAT;
	if (!(ctls->exit & VM_EXIT_SAVE_IA32_EFER) &&
	    !((u32)caps->entry & VM_ENTRY_LOAD_IA32_EFER))
		ctls->entry &= ~VM_ENTRY_LOAD_IA32_EFER;
	return 0;
}

/*
 * VMXON needs IA32_FEATURE_CONTROL locked with "VMX outside SMX" set (SDM
 * Vol. 3C 24.7). Firmware normally locks it; if it is still unlocked we set
 * and lock it ourselves, as Linux's own init_ia32_feat_ctl() would.
 */
int vt_check_feature_control(void)
{
	u64 fc;

	if (vt_rdmsr_safe(MSR_IA32_FEAT_CTL, &fc))
		return -VT_ENODEV;
	if (!(fc & FEAT_CTL_LOCKED)) {
		fc |= FEAT_CTL_LOCKED | FEAT_CTL_VMX_ENABLED_OUTSIDE_SMX;
		if (vt_wrmsr_safe(MSR_IA32_FEAT_CTL, fc))
			return -VT_EIO;
	}
	if (!(fc & FEAT_CTL_VMX_ENABLED_OUTSIDE_SMX)) {
		vt_err("VMX disabled by firmware (IA32_FEATURE_CONTROL=0x%llx)\n", fc);
		return -VT_ENODEV;
	}
	return 0;
}

/* Set a DEBUGCTL bit, read it back, restore: true only if it stuck. */
static bool vt_debugctl_bit_sticks(u64 orig, u64 bit)
{
	u64 back = 0;
	bool sticks;

	if (vt_wrmsr_safe(MSR_IA32_DEBUGCTLMSR, orig | bit))
		return false;
	sticks = !vt_rdmsr_safe(MSR_IA32_DEBUGCTLMSR, &back) && (back & bit);
	vt_wrmsr_safe(MSR_IA32_DEBUGCTLMSR, orig);
	return sticks;
}

/*
 * Whether DEBUGCTL.BTF and .LBR are honoured, probed by effect: emulators
 * (Bochs, QEMU TCG) accept the WRMSR without #GP but read back 0.
 * Returns VTICE_CAP_DEBUGCTL_* flags. Run with interrupts off.
 */
u64 vt_probe_debugctl(void)
{
	u64 orig, flags = 0;

	if (vt_rdmsr_safe(MSR_IA32_DEBUGCTLMSR, &orig))
		return 0;
	if (vt_debugctl_bit_sticks(orig, DEBUGCTLMSR_BTF))
		flags |= VTICE_CAP_DEBUGCTL_BTF;
	if (vt_debugctl_bit_sticks(orig, DEBUGCTLMSR_LBR))
		flags |= VTICE_CAP_DEBUGCTL_LBR;
	return flags;
}
