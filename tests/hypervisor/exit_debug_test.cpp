// The exits a debugger turns on (I/O bitmap, NMI exiting with virtual NMIs,
// preemption timer) and the generic event bookkeeping around every exit,
// on a virtualized fake CPU. Expected values follow the SDM: I/O exit
// qualification Table 28-5, NMI injection rules 26.3.1.5, IDT-vectoring
// re-delivery 28.2.4.
#include "hv_fixture.hpp"

using namespace vtice::fake;

namespace {

int g_nmi_calls, g_timer_calls, g_pre_entry_calls, g_triple_fault_calls;
bool g_in_vmx_at_triple_fault;
bool g_nmi_is_ours;

const vt_callbacks kCallbacks = {
	.ept_violation = [](vt_vcpu *, vt_exit *, u64, u64) { return true; },
	.nmi = [](vt_vcpu *, vt_exit *) { g_nmi_calls++; return g_nmi_is_ours; },
	.triple_fault = [](vt_vcpu *, vt_exit *) {
		g_triple_fault_calls++;
		g_in_vmx_at_triple_fault = vtice::fake::cpu().in_vmx;
		return true;
	},
	.preempt_timer = [](vt_vcpu *, vt_exit *) { g_timer_calls++; return true; },
	.pre_entry = [](vt_vcpu *, vt_exit *) { g_pre_entry_calls++; },
};

constexpr uint64_t kNmiExitInfo = 2 | INTR_TYPE_NMI_INTR | INTR_INFO_VALID_MASK;
constexpr uint64_t kIoIn = 1u << 3;

class DebugExits : public HvFixture {
protected:
	void SetUp() override
	{
		HvFixture::SetUp();
		g_nmi_calls = g_timer_calls = g_pre_entry_calls = g_triple_fault_calls = 0;
		g_nmi_is_ours = false;
		ASSERT_EQ(init(), 0);
		ASSERT_EQ(vt_hv_intercept_ports(&hv, 0x2f8, 8), 0);
		ASSERT_EQ(vt_hv_enable_preempt_timer(&hv, 50'000'000), 0);
		ASSERT_EQ(vt_vcpu_virtualize(&vcpu), 0);
		vt_hv_set_callbacks(&hv, &kCallbacks);
		guest_kernel_mode();
	}

	static uint64_t io_qual(uint16_t port, int size, bool in)
	{
		return ((uint64_t)port << 16) | (uint64_t)(size - 1) | (in ? kIoIn : 0);
	}
};

TEST_F(DebugExits, ControlsAndBitmapsReachTheVmcs)
{
	auto &v = cpu().vmcs;
	EXPECT_TRUE(v[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_USE_IO_BITMAPS);
	EXPECT_TRUE(v[PIN_BASED_VM_EXEC_CONTROL] & PIN_BASED_NMI_EXITING);
	EXPECT_TRUE(v[PIN_BASED_VM_EXEC_CONTROL] & PIN_BASED_VIRTUAL_NMIS);
	EXPECT_TRUE(v[PIN_BASED_VM_EXEC_CONTROL] & PIN_BASED_VMX_PREEMPTION_TIMER);
	auto *a = reinterpret_cast<uint8_t *>(v[IO_BITMAP_A]);
	ASSERT_EQ(v[IO_BITMAP_B], v[IO_BITMAP_A] + 4096);
	for (int port = 0x2f0; port < 0x308; port++)
		EXPECT_EQ((a[port / 8] >> (port % 8)) & 1, port >= 0x2f8 && port < 0x300) << port;
	// the timer ticks when TSC bit IA32_VMX_MISC[4:0] changes (SDM 3C 26.5.1)
	uint32_t shift = cpu().msrs[MSR_IA32_VMX_MISC] & 0x1f;
	EXPECT_EQ(v[VMX_PREEMPTION_TIMER_VALUE], 50'000'000ull >> shift);
}

TEST_F(DebugExits, OwnedPortsLookEmptyToTheGuest)
{
	vt_guest_regs r{};
	r.rax = 0x1234567812345600ull;
	ASSERT_TRUE(vm_exit(EXIT_REASON_IO_INSTRUCTION, io_qual(0x2fd, 1, true), r));
	EXPECT_EQ(r.rax, 0x12345678123456ffull) << "IN AL: only AL changes, to all ones";
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1002u);
	r.rax = 0x1234567812345600ull;
	ASSERT_TRUE(vm_exit(EXIT_REASON_IO_INSTRUCTION, io_qual(0x2f8, 4, true), r));
	EXPECT_EQ(r.rax, 0xffffffffull) << "IN EAX zero-extends into RAX";
	r.rax = 0x41;
	ASSERT_TRUE(vm_exit(EXIT_REASON_IO_INSTRUCTION, io_qual(0x2f8, 1, false), r));
	EXPECT_EQ(r.rax, 0x41u);
	EXPECT_TRUE(cpu().port_out.empty()) << "the guest's OUT never reaches the UART";
}

TEST_F(DebugExits, TimerIsRearmedAndPolls)
{
	vt_guest_regs r{};
	cpu().vmcs[VMX_PREEMPTION_TIMER_VALUE] = 0;	// saved at expiry
	ASSERT_TRUE(vm_exit(EXIT_REASON_PREEMPTION_TIMER, 0, r));
	EXPECT_EQ(cpu().vmcs[VMX_PREEMPTION_TIMER_VALUE], hv.preempt_ticks);
	EXPECT_EQ(g_timer_calls, 1);
}

// A debugger sees a triple fault while the CPU is still in VMX root with the
// guest's state at hand; when it is done, the CPU leaves VMX as without one.
TEST_F(DebugExits, TripleFaultGoesToTheDebuggerFirst)
{
	vt_guest_regs r{};
	EXPECT_FALSE(vm_exit(EXIT_REASON_TRIPLE_FAULT, 0, r));
	EXPECT_EQ(g_triple_fault_calls, 1);
	EXPECT_TRUE(g_in_vmx_at_triple_fault);
	EXPECT_FALSE(cpu().in_vmx);
}

TEST_F(DebugExits, GuestNmiIsInjectedWhenNotBlocked)
{
	vt_guest_regs r{};
	cpu().vmcs[VM_EXIT_INTR_INFO] = kNmiExitInfo;
	ASSERT_TRUE(vm_exit(EXIT_REASON_EXCEPTION_NMI, 0, r));
	EXPECT_EQ(g_nmi_calls, 1) << "the debugger is asked first";
	EXPECT_EQ(entry_event(), kNmiExitInfo);
}

TEST_F(DebugExits, GuestNmiWaitsWhileTheGuestBlocksNmis)
{
	vt_guest_regs r{};
	cpu().vmcs[VM_EXIT_INTR_INFO] = kNmiExitInfo;
	cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] = GUEST_INTR_STATE_NMI;
	ASSERT_TRUE(vm_exit(EXIT_REASON_EXCEPTION_NMI, 0, r));
	EXPECT_EQ(entry_event(), 0u) << "VM entry would refuse an NMI now";
	EXPECT_TRUE(cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_NMI_WINDOW_EXITING);
	cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] = 0;
	ASSERT_TRUE(vm_exit(EXIT_REASON_NMI_WINDOW, 0, r));
	EXPECT_EQ(entry_event(), kNmiExitInfo);
	EXPECT_FALSE(cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_NMI_WINDOW_EXITING);
}

TEST_F(DebugExits, TheDebuggersOwnNmiIsNotDelivered)
{
	vt_guest_regs r{};
	g_nmi_is_ours = true;
	cpu().vmcs[VM_EXIT_INTR_INFO] = kNmiExitInfo;
	ASSERT_TRUE(vm_exit(EXIT_REASON_EXCEPTION_NMI, 0, r));
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_FALSE(vcpu.nmi_pending);
}

TEST_F(DebugExits, AnEventCutShortByAnExitIsDeliveredAgain)
{
	vt_guest_regs r{};
	uint64_t timer_irq = 0xec | INTR_INFO_VALID_MASK;	// external interrupt, type 0
	cpu().vmcs[IDT_VECTORING_INFO_FIELD] = timer_irq;
	ASSERT_TRUE(vm_exit(EXIT_REASON_EPT_VIOLATION, 0x2, r));
	EXPECT_EQ(entry_event(), timer_irq);
	cpu().vmcs[IDT_VECTORING_INFO_FIELD] = 14 | INTR_TYPE_HARD_EXCEPTION |
					       INTR_INFO_DELIVER_CODE_MASK | INTR_INFO_VALID_MASK;
	cpu().vmcs[IDT_VECTORING_ERROR_CODE] = 0x2;
	ASSERT_TRUE(vm_exit(EXIT_REASON_EPT_VIOLATION, 0x2, r));
	EXPECT_EQ(entry_event(), cpu().vmcs[IDT_VECTORING_INFO_FIELD]);
	EXPECT_EQ(cpu().vmcs[VM_ENTRY_EXCEPTION_ERROR_CODE], 0x2u);
}

TEST_F(DebugExits, PreEntryRunsBeforeEveryResume)
{
	vt_guest_regs r{};
	r.rax = 0;
	vm_exit(EXIT_REASON_CPUID, 0, r);
	vm_exit(EXIT_REASON_PREEMPTION_TIMER, 0, r);
	EXPECT_EQ(g_pre_entry_calls, 2);
}

TEST_F(DebugExits, RefusedWhereTheCpuLacksTheControl)
{
	vt_hv other{};
	other.caps = hv.caps;
	other.caps.pin &= ~((uint64_t)PIN_BASED_VMX_PREEMPTION_TIMER << 32);
	EXPECT_EQ(vt_hv_enable_preempt_timer(&other, 1000), -VT_EOPNOTSUPP);
	other.caps = hv.caps;
	EXPECT_EQ(vt_hv_enable_preempt_timer(&other, 0), -VT_EINVAL);
}

}  // namespace
