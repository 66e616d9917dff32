// VMCS control computation from the capability MSRs (SDM 3D A.3-A.5, 3C 31.5.1).
#include <gtest/gtest.h>

#include "fake_cpu.hpp"

extern "C" {
#include "hv.h"
#include <vtice/ioctl.h>
}

using namespace vtice::fake;

namespace {

// Every control honours its MSR: allowed-0 bits set, nothing outside allowed-1.
void expect_within(uint32_t ctl, uint64_t msr, const char *what)
{
	EXPECT_EQ(ctl & (uint32_t)msr, (uint32_t)msr) << what << ": a must-be-1 bit is clear";
	EXPECT_EQ(ctl & ~(uint32_t)(msr >> 32), 0u) << what << ": a must-be-0 bit is set";
}

struct Computed {
	vt_vmx_caps caps{};
	vt_controls ctls{};
	int ret = -1;
};

Computed compute(const VmxProfile &p)
{
	Computed c;
	reset();
	seed_vmx(p);
	EXPECT_EQ(vt_caps_read(&c.caps), 0);
	c.ret = vt_compute_controls(&c.caps, &c.ctls);
	return c;
}

}  // namespace

TEST(Controls, AdjustHonoursAllowedSettings)
{
	uint32_t out = 0;
	// allowed-0 = 0x16 (must be 1), allowed-1 = 0x7f (may be 1)
	ASSERT_EQ(vt_adjust_controls(0x7f00000016ull, 0x8, 0x40, &out), 0);
	EXPECT_EQ(out, 0x16u | 0x8u | 0x40u);
	// optional bits the CPU cannot set are dropped, required ones fail
	ASSERT_EQ(vt_adjust_controls(0x1f00000016ull, 0, 0x40, &out), 0);
	EXPECT_EQ(out, 0x16u);
	EXPECT_EQ(vt_adjust_controls(0x1f00000016ull, 0x40, 0, &out), -VT_EOPNOTSUPP);
	// an MSR demanding a bit it does not allow is not trusted
	EXPECT_EQ(vt_adjust_controls(0x0f00000016ull, 0, 0, &out), -VT_EIO);
}

TEST(Controls, BochsSkylakeX)
{
	Computed c = compute(bochs_skylake_x);
	ASSERT_EQ(c.ret, 0);
	EXPECT_TRUE(c.caps.flags & VTICE_CAP_TRUE_CTLS);
	// pin: the default-1 class (bits 1, 2, 4), NMI exiting and virtual NMIs
	EXPECT_EQ(c.ctls.pin, 0x16u | PIN_BASED_NMI_EXITING | PIN_BASED_VIRTUAL_NMIS);
	// primary: TRUE MSR lets CR3-load/store exiting (bits 15, 16) be 0;
	// default-1 bits 1, 4-6, 8, 13, 14, 26 stay; plus MSR bitmaps and secondary
	EXPECT_EQ(c.ctls.proc, 0x04006172u | CPU_BASED_USE_MSR_BITMAPS |
				       CPU_BASED_ACTIVATE_SECONDARY_CONTROLS);
	EXPECT_FALSE(c.ctls.proc & (CPU_BASED_CR3_LOAD_EXITING | CPU_BASED_CR3_STORE_EXITING));
	// secondary: EPT, unrestricted guest (real mode after an INIT), VPID,
	// and the #UD-avoiding RDTSCP, INVPCID, XSAVES; Bochs's allowed-1
	// (0x02177fff) lacks user-wait-pause (bit 26)
	EXPECT_EQ(c.ctls.proc2, SECONDARY_EXEC_ENABLE_EPT | SECONDARY_EXEC_UNRESTRICTED_GUEST |
					SECONDARY_EXEC_ENABLE_VPID |
					SECONDARY_EXEC_ENABLE_RDTSCP | SECONDARY_EXEC_ENABLE_INVPCID |
					SECONDARY_EXEC_XSAVES);
	// TRUE exit/entry MSRs leave the debug-controls bits (2) optional: we want them
	EXPECT_EQ(c.ctls.exit, 0x36dfbu | VM_EXIT_SAVE_DEBUG_CONTROLS |
				       VM_EXIT_HOST_ADDR_SPACE_SIZE | VM_EXIT_SAVE_IA32_PAT |
				       VM_EXIT_LOAD_IA32_PAT | VM_EXIT_SAVE_IA32_EFER |
				       VM_EXIT_LOAD_IA32_EFER);
	EXPECT_EQ(c.ctls.entry, 0x11fbu | VM_ENTRY_LOAD_DEBUG_CONTROLS | VM_ENTRY_IA32E_MODE |
					VM_ENTRY_LOAD_IA32_PAT |
					VM_ENTRY_LOAD_IA32_EFER);
	expect_within(c.ctls.pin, c.caps.pin, "pin");
	expect_within(c.ctls.proc, c.caps.proc, "proc");
	expect_within(c.ctls.proc2, c.caps.proc2, "proc2");
	expect_within(c.ctls.exit, c.caps.exit, "exit");
	expect_within(c.ctls.entry, c.caps.entry, "entry");
}

TEST(Controls, BochsCapabilityFlags)
{
	Computed c = compute(bochs_skylake_x);
	// IA32_VMX_EPT_VPID_CAP 0xf0106334141: exec-only(0) 4-level(6) WB(14)
	// 2M(16) 1G(17) INVEPT(20) A/D(21) single/all-context(25, 26), INVVPID(32)
	for (uint64_t f : {VTICE_CAP_VMX, VTICE_CAP_EPT, VTICE_CAP_EPT_2M, VTICE_CAP_EPT_1G,
			   VTICE_CAP_EPT_AD, VTICE_CAP_EPT_EXEC_ONLY, VTICE_CAP_INVEPT_SINGLE,
			   VTICE_CAP_VPID, VTICE_CAP_PREEMPT_TIMER, VTICE_CAP_UNRESTRICTED,
			   VTICE_CAP_MSR_BITMAP})
		EXPECT_TRUE(c.caps.flags & f) << std::hex << f;
	// TRUE_PROCBASED allowed-1 0xf7f9fffe has bit 27 clear: this Bochs model
	// does not offer the monitor trap flag.
	EXPECT_FALSE(c.caps.flags & VTICE_CAP_MTF);
	EXPECT_EQ(c.caps.preempt_timer_shift, 0u);	// MISC 0x600401e0 bits 4:0
}

TEST(Controls, SkylakeHost)
{
	Computed c = compute(skylake);
	ASSERT_EQ(c.ret, 0);
	EXPECT_EQ(c.ctls.pin, 0x16u | PIN_BASED_NMI_EXITING | PIN_BASED_VIRTUAL_NMIS);
	EXPECT_EQ(c.ctls.proc, 0x04006172u | CPU_BASED_USE_MSR_BITMAPS |
				       CPU_BASED_ACTIVATE_SECONDARY_CONTROLS);
	// allowed-1 0x005ffcff has no user-wait-pause either, but conceals VMX from PT
	EXPECT_EQ(c.ctls.proc2, SECONDARY_EXEC_ENABLE_EPT | SECONDARY_EXEC_UNRESTRICTED_GUEST |
					SECONDARY_EXEC_ENABLE_VPID |
					SECONDARY_EXEC_ENABLE_RDTSCP | SECONDARY_EXEC_ENABLE_INVPCID |
					SECONDARY_EXEC_XSAVES | SECONDARY_EXEC_PT_CONCEAL_VMX);
	// exit allowed-1 0x01ffffff has bit 24, entry allowed-1 0x0003ffff bit 17
	EXPECT_TRUE(c.ctls.exit & VM_EXIT_PT_CONCEAL_PIP);
	EXPECT_TRUE(c.ctls.entry & VM_ENTRY_PT_CONCEAL_PIP);
	EXPECT_EQ(c.caps.preempt_timer_shift, 7u);	// MISC 0x7004c1e7
	expect_within(c.ctls.exit, c.caps.exit, "exit");
	expect_within(c.ctls.entry, c.caps.entry, "entry");
}

TEST(Controls, WithoutTrueMsrsDefaultOnesStay)
{
	VmxProfile p = skylake;
	p.basic &= ~VMX_BASIC_TRUE_CTLS;
	Computed c = compute(p);
	ASSERT_EQ(c.ret, 0);
	EXPECT_FALSE(c.caps.flags & VTICE_CAP_TRUE_CTLS);
	// The plain MSR reports CR3-load/store exiting as must-be-1 (SDM 3D A.3.2)
	EXPECT_TRUE(c.ctls.proc & CPU_BASED_CR3_LOAD_EXITING);
	EXPECT_TRUE(c.ctls.proc & CPU_BASED_CR3_STORE_EXITING);
	expect_within(c.ctls.proc, cpu().msrs[MSR_IA32_VMX_PROCBASED_CTLS], "proc");
}

// The message names what is missing (issue 21: Bochs's core2_penryn_t9600
// has VMX without EPT).
bool logged(const std::string &text)
{
	for (const auto &line : log_lines())
		if (line.find(text) != std::string::npos)
			return true;
	return false;
}

TEST(Controls, NoEptIsRefusedByName)
{
	VmxProfile p = bochs_skylake_x;
	p.proc2 &= ~((uint64_t)SECONDARY_EXEC_ENABLE_EPT << 32);
	Computed c = compute(p);
	EXPECT_EQ(c.ret, -VT_EOPNOTSUPP);
	EXPECT_FALSE(c.caps.flags & VTICE_CAP_EPT);
	EXPECT_TRUE(logged("lacks EPT (extended page tables)"));
}

TEST(Controls, NoUnrestrictedGuestIsRefusedByName)
{
	VmxProfile p = bochs_skylake_x;
	p.proc2 &= ~((uint64_t)SECONDARY_EXEC_UNRESTRICTED_GUEST << 32);
	EXPECT_EQ(compute(p).ret, -VT_EOPNOTSUPP);
	EXPECT_TRUE(logged("lacks unrestricted guest"));
}

// Every change to a hidden breakpoint's view is flushed with INVEPT: a CPU
// whose EPT offers no INVEPT type (IA32_VMX_EPT_VPID_CAP bits 20, 25, 26)
// would run on stale views, so it is refused; one type of the two suffices.
TEST(Controls, NoInveptIsRefusedByName)
{
	VmxProfile p = bochs_skylake_x;
	p.ept_vpid &= ~(uint64_t)VMX_EPT_INVEPT_BIT;
	EXPECT_EQ(compute(p).ret, -VT_EOPNOTSUPP);
	EXPECT_TRUE(logged("lacks INVEPT"));
	p = bochs_skylake_x;
	p.ept_vpid &= ~(uint64_t)(VMX_EPT_EXTENT_CONTEXT_BIT | VMX_EPT_EXTENT_GLOBAL_BIT);
	EXPECT_EQ(compute(p).ret, -VT_EOPNOTSUPP);
	p.ept_vpid |= VMX_EPT_EXTENT_GLOBAL_BIT;
	Computed c = compute(p);
	EXPECT_EQ(c.ret, 0) << "all-context INVEPT alone serves";
	EXPECT_FALSE(c.caps.flags & VTICE_CAP_INVEPT_SINGLE);
}

// An NMI that arrives in VMX root reaches the guest through an NMI window,
// which needs virtual NMIs (SDM 3C 26.2.1.1): a CPU without either is refused.
TEST(Controls, NoVirtualNmisIsRefused)
{
	VmxProfile p = bochs_skylake_x;
	p.pin &= ~((uint64_t)PIN_BASED_VIRTUAL_NMIS << 32);
	EXPECT_EQ(compute(p).ret, -VT_EOPNOTSUPP);
	EXPECT_TRUE(logged("lacks virtual NMIs"));
	p = bochs_skylake_x;
	p.proc &= ~((uint64_t)CPU_BASED_NMI_WINDOW_EXITING << 32);
	EXPECT_EQ(compute(p).ret, -VT_EOPNOTSUPP);
}

TEST(Controls, NoSecondaryControlsMeansNoProc2OrEptCapRead)
{
	VmxProfile p = bochs_skylake_x;
	p.proc &= ~((uint64_t)CPU_BASED_ACTIVATE_SECONDARY_CONTROLS << 32);
	Computed c = compute(p);
	EXPECT_EQ(c.caps.proc2, 0u);
	EXPECT_EQ(c.caps.ept_vpid, 0u);
	EXPECT_EQ(c.ret, -VT_EOPNOTSUPP);
	EXPECT_TRUE(logged("lacks secondary processor-based controls"));
}

TEST(Controls, EferLoadNeedsEferSave)
{
	VmxProfile p = bochs_skylake_x;
	p.exit &= ~((uint64_t)VM_EXIT_SAVE_IA32_EFER << 32);	// cannot save EFER
	Computed c = compute(p);
	ASSERT_EQ(c.ret, 0);
	EXPECT_FALSE(c.ctls.exit & VM_EXIT_SAVE_IA32_EFER);
	EXPECT_FALSE(c.ctls.entry & VM_ENTRY_LOAD_IA32_EFER)
		<< "loading EFER on entry without saving it on exit would undo guest WRMSRs";
	EXPECT_TRUE(c.ctls.entry & VM_ENTRY_LOAD_IA32_PAT);
}

TEST(Controls, NoVmxInCpuid)
{
	reset();
	seed_vmx(bochs_skylake_x);
	cpu().cpuid[{1, 0}].ecx &= ~(uint32_t)CPUID_1_ECX_VMX;
	vt_vmx_caps caps{};
	EXPECT_EQ(vt_caps_read(&caps), -VT_ENODEV);
}

TEST(Controls, FeatureControl)
{
	reset();
	seed_vmx(bochs_skylake_x);
	auto &c = cpu();
	c.msrs[MSR_IA32_FEAT_CTL] = 0;	// unlocked: we lock it with VMX outside SMX
	EXPECT_EQ(vt_check_feature_control(), 0);
	EXPECT_EQ(c.msrs[MSR_IA32_FEAT_CTL], FEAT_CTL_LOCKED | FEAT_CTL_VMX_ENABLED_OUTSIDE_SMX);
	c.msrs[MSR_IA32_FEAT_CTL] = FEAT_CTL_LOCKED;	// locked with VMX off by firmware
	EXPECT_EQ(vt_check_feature_control(), -VT_ENODEV);
}

TEST(DebugctlProbe, HonouredBitsAreReported)
{
	reset();
	seed_vmx(bochs_skylake_x);
	cpu().msrs[MSR_IA32_DEBUGCTLMSR] = 0;
	cpu().msr_sticky_mask[MSR_IA32_DEBUGCTLMSR] = DEBUGCTLMSR_LBR | DEBUGCTLMSR_BTF;
	EXPECT_EQ(vt_probe_debugctl(), VTICE_CAP_DEBUGCTL_BTF | VTICE_CAP_DEBUGCTL_LBR);
	EXPECT_EQ(cpu().msrs[MSR_IA32_DEBUGCTLMSR], 0u) << "probe must restore DEBUGCTL";
}

TEST(DebugctlProbe, BochsReadsBackZero)
{
	reset();
	seed_vmx(bochs_skylake_x);
	cpu().msrs[MSR_IA32_DEBUGCTLMSR] = 0;
	cpu().msr_sticky_mask[MSR_IA32_DEBUGCTLMSR] = 0;	// accepted, ignored
	EXPECT_EQ(vt_probe_debugctl(), 0u);
}

TEST(DebugctlProbe, OnlyBtf)
{
	reset();
	seed_vmx(bochs_skylake_x);
	cpu().msrs[MSR_IA32_DEBUGCTLMSR] = 0;
	cpu().msr_sticky_mask[MSR_IA32_DEBUGCTLMSR] = DEBUGCTLMSR_BTF;
	EXPECT_EQ(vt_probe_debugctl(), VTICE_CAP_DEBUGCTL_BTF);
}

TEST(DebugctlProbe, GpOnWriteMeansUnsupported)
{
	reset();
	seed_vmx(bochs_skylake_x);
	cpu().msrs.erase(MSR_IA32_DEBUGCTLMSR);
	EXPECT_EQ(vt_probe_debugctl(), 0u);
}
