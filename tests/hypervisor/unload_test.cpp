// Leaving VMX at the stub's "monitor unload" (hv->unloading, core/exit.c):
// a CPU goes back to the kernel only at an exit where nothing VM entry
// would deliver is pending, in the kernel's own code segment with its GS.
#include "hv_fixture.hpp"

using namespace vtice::fake;

namespace {

class Unload : public HvFixture {
protected:
	void SetUp() override
	{
		HvFixture::SetUp();
		virtualize();
		guest_kernel_mode();
		auto &c = cpu();
		c.vmcs[GUEST_CS_SELECTOR] = c.vmcs[HOST_CS_SELECTOR];
		c.vmcs[GUEST_GS_BASE] = 0xffff888007c00000ull;	// a per-CPU area in the direct map
		hv.unloading = true;
	}

	// A CPUID exit, handled; true when the CPU went back into the guest.
	bool cpuid_exit()
	{
		vt_guest_regs r{};
		return vm_exit(EXIT_REASON_CPUID, 0, r);
	}
};

TEST_F(Unload, TheKernelTakesTheCpuBackAtAQuietExit)
{
	EXPECT_FALSE(cpuid_exit());
	EXPECT_FALSE(cpu().in_vmx);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1002u) << "the CPUID was completed before leaving";
}

TEST_F(Unload, NothingLeavesBeforeTheDebuggerDetaches)
{
	hv.unloading = false;
	EXPECT_TRUE(cpuid_exit());
	EXPECT_TRUE(cpu().in_vmx);
}

TEST_F(Unload, UserModeAndTheEntryBeforeSwapgsStayInVmx)
{
	guest_user_mode();
	EXPECT_TRUE(cpuid_exit()) << "user mode: not the kernel's code segment";
	guest_kernel_mode();
	cpu().vmcs[GUEST_GS_BASE] = 0x7f0012345000ull;	// kernel CS, the user's GS base
	EXPECT_TRUE(cpuid_exit()) << "a system call's first instructions, before SWAPGS";
	EXPECT_TRUE(cpu().in_vmx);
}

TEST_F(Unload, APendingEventOrBlockingKeepsTheCpuInVmx)
{
	cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] = GUEST_INTR_STATE_NMI;
	EXPECT_TRUE(cpuid_exit()) << "blocking by NMI: inside the kernel's NMI handler";
	cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] = 0;
	cpu().vmcs[GUEST_PENDING_DBG_EXCEPTIONS] = 0x4000;	// BS: a single step pending
	EXPECT_TRUE(cpuid_exit()) << "a pending debug exception";
	cpu().vmcs[GUEST_PENDING_DBG_EXCEPTIONS] = 0;
	cpu().vmcs[GUEST_ACTIVITY_STATE] = GUEST_ACTIVITY_WAIT_SIPI;
	EXPECT_TRUE(cpuid_exit()) << "waiting for a SIPI";
	cpu().vmcs[GUEST_ACTIVITY_STATE] = GUEST_ACTIVITY_HLT;
	EXPECT_FALSE(cpuid_exit()) << "halted: the kernel's idle loop resumes after the HLT";
	EXPECT_FALSE(cpu().in_vmx);
}

}  // namespace
