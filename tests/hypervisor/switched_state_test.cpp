// State the CPU switches between the kernel and VMX root at VM entry and
// exit (hypervisor/core/vmx_caps.c): IA32_PERF_GLOBAL_CTRL and CET. The
// values are the SDM's (3C 25.7 and 25.8 for the controls, 28.3.2 for what
// entry loads); the profiles are fake_cpu.cpp's, a CET CPU being the
// Skylake host plus the two "load CET state" controls and the MSRs that
// Tiger Lake adds (SDM 3D A.4, A.5; Vol. 4 Table 2-2).
#include "hv_fixture.hpp"
#include <vtice/vmcall.h>

using namespace vtice::fake;

namespace {

constexpr uint64_t kKernelPerfGlobal = 0x70000000full;	// fake_cpu.cpp's seed

class SwitchedState : public HvFixture {
protected:
	void start(const VmxProfile &p)
	{
		reset();
		seed_vmx(p);
		virtualize();
		guest_kernel_mode();
	}
};

TEST_F(SwitchedState, PerfGlobalCtrlIsTheKernelsInTheGuestAndZeroInRoot)
{
	start(skylake);
	EXPECT_TRUE(hv.caps.flags & VTICE_CAP_PERF_GLOBAL);
	EXPECT_TRUE(hv.ctls.exit & VM_EXIT_LOAD_IA32_PERF_GLOBAL_CTRL);
	EXPECT_TRUE(hv.ctls.entry & VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_PERF_GLOBAL_CTRL], kKernelPerfGlobal);
	EXPECT_EQ(cpu().vmcs[HOST_IA32_PERF_GLOBAL_CTRL], 0u) << "root's work is not counted";
	// This Skylake cannot save the value at exit (allowed-1 0x01ffffff lacks
	// bit 30): a guest write must exit so that it reaches the VMCS.
	EXPECT_FALSE(hv.ctls.exit & VM_EXIT_SAVE_IA32_PERF_GLOBAL_CTRL);
	EXPECT_TRUE(msr_exits(MSR_CORE_PERF_GLOBAL_CTRL));
}

TEST_F(SwitchedState, TheKernelReadsBackWhatItWroteWhileRootKeepsZero)
{
	start(skylake);
	cpu().msrs[MSR_CORE_PERF_GLOBAL_CTRL] = 0;	// as VM exit left it
	msr_access(EXIT_REASON_MSR_WRITE, MSR_CORE_PERF_GLOBAL_CTRL, 0x300000003ull);
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_PERF_GLOBAL_CTRL], 0x300000003ull) << "loaded at the next entry";
	EXPECT_EQ(cpu().msrs[MSR_CORE_PERF_GLOBAL_CTRL], 0u);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1002u);
	vt_guest_regs r = msr_access(EXIT_REASON_MSR_READ, MSR_CORE_PERF_GLOBAL_CTRL);
	EXPECT_EQ(r.rax, 3u);
	EXPECT_EQ(r.rdx, 3u);
}

TEST_F(SwitchedState, AWriteTheCpuRefusesIsTheKernelsGp)
{
	start(skylake);
	cpu().fail.insert("wrmsr");	// reserved bits: the real WRMSR faults
	msr_access(EXIT_REASON_MSR_WRITE, MSR_CORE_PERF_GLOBAL_CTRL, 1ull << 63);
	EXPECT_EQ(entry_event(), kInjectGP);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_PERF_GLOBAL_CTRL], kKernelPerfGlobal) << "unchanged";
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1000u);
}

TEST_F(SwitchedState, ACpuThatSavesTheValueNeedsNoExit)
{
	VmxProfile p = skylake;
	p.exit |= (uint64_t)VM_EXIT_SAVE_IA32_PERF_GLOBAL_CTRL << 32;
	start(p);
	EXPECT_TRUE(hv.ctls.exit & VM_EXIT_SAVE_IA32_PERF_GLOBAL_CTRL);
	EXPECT_FALSE(msr_exits(MSR_CORE_PERF_GLOBAL_CTRL));
}

// Bochs's VMX offers the controls but it has no PMU (RDMSR 0x38f #GP);
// a parent hypervisor may hide the PMU the same way.
TEST_F(SwitchedState, ControlsWithoutTheMsrAreNotUsed)
{
	start(bochs_skylake_x);
	EXPECT_TRUE(hv.caps.exit & ((uint64_t)VM_EXIT_LOAD_IA32_PERF_GLOBAL_CTRL << 32)) << "offered";
	EXPECT_FALSE(hv.caps.flags & VTICE_CAP_PERF_GLOBAL);
	EXPECT_FALSE(hv.ctls.exit & VM_EXIT_LOAD_IA32_PERF_GLOBAL_CTRL);
	EXPECT_FALSE(hv.ctls.entry & VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL);
	EXPECT_FALSE(msr_exits(MSR_CORE_PERF_GLOBAL_CTRL));
}

TEST_F(SwitchedState, HalfAPerfGlobalPairIsNotUsed)
{
	VmxProfile p = skylake;
	p.entry &= ~((uint64_t)VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL << 32);
	start(p);
	EXPECT_FALSE(hv.ctls.exit & VM_EXIT_LOAD_IA32_PERF_GLOBAL_CTRL)
		<< "zeroing the counters at exit with nothing to restore them at entry";
	EXPECT_FALSE(msr_exits(MSR_CORE_PERF_GLOBAL_CTRL));
}

TEST_F(SwitchedState, HalfACetPairIsNotUsed)
{
	VmxProfile p = with_cet(skylake);
	p.entry &= ~((uint64_t)VM_ENTRY_LOAD_CET_STATE << 32);
	start(p);
	EXPECT_FALSE(hv.ctls.exit & VM_EXIT_LOAD_CET_STATE);
}

TEST_F(SwitchedState, RootRunsWithoutCetAndTheKernelKeepsItsOwn)
{
	start(with_cet(skylake));
	EXPECT_TRUE(hv.caps.flags & VTICE_CAP_CET);
	ASSERT_TRUE(hv.ctls.exit & VM_EXIT_LOAD_CET_STATE);
	ASSERT_TRUE(hv.ctls.entry & VM_ENTRY_LOAD_CET_STATE);
	auto &c = cpu();
	EXPECT_EQ(c.vmcs[GUEST_S_CET], (uint64_t)CET_ENDBR_EN) << "the kernel's IBT stays on";
	EXPECT_EQ(c.vmcs[GUEST_SSP], 0u);
	EXPECT_EQ(c.vmcs[GUEST_INTR_SSP_TABLE], 0u);
	EXPECT_EQ(c.vmcs[HOST_S_CET], 0u) << "root's code has no ENDBR64 at its targets";
	EXPECT_EQ(c.vmcs[HOST_SSP], 0u);
	EXPECT_EQ(c.vmcs[HOST_INTR_SSP_TABLE], 0u);
}

// Found by tests/transparency on Sapphire Rapids with 6.12: after rmmod,
// IA32_S_CET read 0 (bare: ENDBR_EN), the kernel's IBT silently off; the
// same held for PERF_GLOBAL_CTRL (the kernel's counters off).
TEST_F(SwitchedState, LeavingVmxGivesTheKernelItsOwnBack)
{
	start(with_cet(skylake));
	ASSERT_TRUE(hv.ctls.entry & VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL);
	auto &c = cpu();
	c.vmcs[GUEST_INTR_SSP_TABLE] = 0xffff888001234000ull;
	// What the last VM exit loaded: root's values (HOST_* above).
	c.msrs[MSR_IA32_S_CET] = 0;
	c.msrs[MSR_IA32_INT_SSP_TAB] = 0;
	c.msrs[MSR_CORE_PERF_GLOBAL_CTRL] = 0;
	vt_guest_regs r{};
	r.rax = VTICE_VMCALL_DEVIRTUALIZE;
	r.rcx = hv.key;
	EXPECT_FALSE(vm_exit(EXIT_REASON_VMCALL, 0, r)) << "leaves VMX";
	EXPECT_FALSE(c.in_vmx);
	EXPECT_EQ(c.msrs[MSR_IA32_S_CET], (uint64_t)CET_ENDBR_EN) << "the kernel's IBT on again";
	EXPECT_EQ(c.msrs[MSR_IA32_INT_SSP_TAB], 0xffff888001234000ull);
	EXPECT_EQ(c.msrs[MSR_CORE_PERF_GLOBAL_CTRL], kKernelPerfGlobal) << "its counters on again";
}

TEST_F(SwitchedState, CetControlsWithoutTheMsrsAreNotUsed)
{
	VmxProfile p = with_cet(skylake);
	p.cet = false;
	start(p);
	EXPECT_FALSE(hv.caps.flags & VTICE_CAP_CET);
	EXPECT_FALSE(hv.ctls.exit & VM_EXIT_LOAD_CET_STATE);
	EXPECT_FALSE(hv.ctls.entry & VM_ENTRY_LOAD_CET_STATE);
}

}  // namespace
