// Single steps with RFLAGS.TF where MTF is missing (debug/single_step.c).
// The oracle is the SDM: TF raises a single-step #DB after one instruction
// (Vol. 3A 18.3.1.4) and exits with BS in the qualification (3C 28.2.1);
// the frame an event pushes holds RFLAGS as they were (3A 6.12.1), so the
// guest must never find our TF there, in a PUSHF image or in SYSCALL's R11
// (Vol. 2B); a 64-bit IDT gate holds the handler's address in three
// pieces (3A 6.14.1); an execute breakpoint is DR7 Ln=1 with R/W=LEN=0
// (3A 18.2.4).
#include "hooks_fixture.hpp"

extern "C" {
#include "single_step.h"
}

namespace vtice::fake {
namespace {

constexpr uint64_t kTF = 1u << 8, kIF = 1u << 9;
constexpr uint64_t kBS = 1u << 14;
constexpr uint32_t kValid = 1u << 31;
constexpr uint32_t kHardException = 3u << 8, kSoftInterrupt = 4u << 8, kDeliverCode = 1u << 11;
constexpr uint64_t kText = kKernelBase + 0x1000;	// where the stepped instruction is
constexpr uint64_t kStack = kKernelBase + 0x8000;
constexpr uint64_t kIdt = kKernelBase + 0x20000;
constexpr uint64_t kPfHandler = 0xffffffff81a01230ull, kInt80Handler = 0xffffffff81a05670ull;

std::vector<uint8_t> *g_ram;

// The vt_own_mem_fn over the fixture's RAM, through the linear kernel map.
extern "C" int own_mem(const vt_vcpu *, u64 gva, void *buf, u32 len, bool write)
{
	u64 gpa;
	if (fake_translate(0, gva, &gpa) || fake_translate(0, gva + len - 1, &gpa))
		return -14;
	uint8_t *p = g_ram->data() + (gva - kKernelBase);
	if (write)
		memcpy(p, buf, len);
	else
		memcpy(buf, p, len);
	return static_cast<int>(len);
}

class TfStep : public HooksFixture {
protected:
	void SetUp() override
	{
		HooksFixture::SetUp();
		g_ram = &ram;
		start(8, false);	// no MTF: every step is a TF step
		vt_hooks_set_own_mem(own_mem);
		vmcs(GUEST_RIP) = kText;
		vmcs(GUEST_RSP) = kStack;
		vmcs(GUEST_RFLAGS) = 0x202;
		vmcs(GUEST_IDTR_BASE) = kIdt;
		vmcs(GUEST_IDTR_LIMIT) = 256 * 16 - 1;
		vmcs(EXCEPTION_BITMAP) = 0;
		gate(14, kPfHandler);
		gate(0x80, kInt80Handler);
		code({0x48, 0x89, 0xc3});	// mov rbx, rax
	}

	uint64_t &vmcs(uint32_t field) { return cpu().vmcs[field]; }
	uint8_t *at(uint64_t gva) { return ram.data() + (gva - kKernelBase); }
	void code(std::initializer_list<uint8_t> bytes) { std::copy(bytes.begin(), bytes.end(), at(kText)); }

	// A present 64-bit interrupt gate (type 0xE) for vector v.
	void gate(uint32_t v, uint64_t handler)
	{
		uint64_t lo = (handler & 0xffff) | (0x10ull << 16) | (0x8eull << 40) | ((handler >> 16 & 0xffff) << 48);
		uint64_t hi = handler >> 32;
		memcpy(at(kIdt + v * 16), &lo, 8);
		memcpy(at(kIdt + v * 16 + 8), &hi, 8);
	}

	vt_tf_event debug_exit(uint64_t dr6_bits, u64 *other = nullptr)
	{
		u64 rest;
		exit.qual = dr6_bits;
		return vt_single_step_on_debug(&vcpu, &exit, other ? other : &rest);
	}

	bool holding() { return vmcs(PIN_BASED_VM_EXEC_CONTROL) & PIN_BASED_EXT_INTR_MASK; }
};

TEST_F(TfStep, ArmSetsTfHoldsInterruptsAndInterceptsEveryVector)
{
	vmcs(EXCEPTION_BITMAP) = 1u << 3;
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_EQ(vmcs(GUEST_RFLAGS), 0x202 | kTF);
	EXPECT_EQ(vmcs(EXCEPTION_BITMAP), 0xffffffffu);
	EXPECT_TRUE(holding());
	EXPECT_TRUE(vmcs(VM_EXIT_CONTROLS) & VM_EXIT_ACK_INTR_ON_EXIT);
	EXPECT_FALSE(mtf_armed());
}

TEST_F(TfStep, TheSingleStepTrapEndsItAndPutsEverythingBack)
{
	vmcs(EXCEPTION_BITMAP) = 1u << 3;
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_EQ(debug_exit(kBS), VT_TF_DONE);
	EXPECT_EQ(vmcs(GUEST_RFLAGS), 0x202u);
	EXPECT_EQ(vmcs(EXCEPTION_BITMAP), 1u << 3) << "the step takes back only the bits it set";
	EXPECT_FALSE(holding());
	EXPECT_EQ(debug_exit(kBS), VT_TF_NOT_MINE) << "the guest's own single step";
}

TEST_F(TfStep, StiAndMovSsBlockingAreDroppedForTheStep)
{
	// VM entry would fail: TF=1 under STI blocking wants a pending BS (SDM 3C 26.3.1.5).
	vmcs(GUEST_INTERRUPTIBILITY_INFO) = GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS;
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_EQ(vmcs(GUEST_INTERRUPTIBILITY_INFO), 0u);
}

TEST_F(TfStep, PushfImageLosesOurTf)
{
	code({0x9c});	// pushfq
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	// The CPU pushed RFLAGS as they were: with our TF.
	vmcs(GUEST_RSP) = kStack - 8;
	uint64_t pushed = 0x202 | kTF;
	memcpy(at(kStack - 8), &pushed, 8);
	vmcs(GUEST_RIP) = kText + 1;
	ASSERT_EQ(debug_exit(kBS), VT_TF_DONE);
	memcpy(&pushed, at(kStack - 8), 8);
	EXPECT_EQ(pushed, 0x202u);
}

TEST_F(TfStep, TheGuestsOwnTfStaysEverywhere)
{
	code({0x66, 0x9c});	// pushfw
	vmcs(GUEST_RFLAGS) = 0x202 | kTF;
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	vmcs(GUEST_RSP) = kStack - 2;
	uint16_t pushed = 0x302;
	memcpy(at(kStack - 2), &pushed, 2);
	ASSERT_EQ(debug_exit(kBS), VT_TF_DONE);
	memcpy(&pushed, at(kStack - 2), 2);
	EXPECT_EQ(pushed, 0x302u);
	EXPECT_EQ(vmcs(GUEST_RFLAGS), 0x202 | kTF);
}

// SYSCALL loads RFLAGS masked by FMASK, SYSRET loads R11: the CPU raises no
// single-step trap after either (Linux's entry code relies on the first,
// and avoids SYSRET with TF in R11 because of the second). The step ends
// at their target through an execute breakpoint instead, with no TF set.
TEST_F(TfStep, SyscallEndsAtTheKernelsEntryThroughALentRegister)
{
	constexpr uint64_t kEntry = 0xffffffff81e00000ull;	// IA32_LSTAR: entry_SYSCALL_64
	cpu().msrs[MSR_LSTAR] = kEntry;
	code({0x0f, 0x05});
	guest_user_mode();
	vmcs(GUEST_RIP) = kText;
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_EQ(vmcs(GUEST_RFLAGS) & kTF, 0u) << "no TF to leak into R11";
	EXPECT_EQ(cpu().dr[0], kEntry);
	EXPECT_EQ(vmcs(GUEST_DR7) & 0xf00ffu, 1u) << "L0, execute, length 1";
	regs.r11 = 0x202;	// what SYSCALL saved
	vmcs(GUEST_RIP) = kEntry;
	EXPECT_EQ(debug_exit(1u << 0), VT_TF_DONE);
	EXPECT_EQ(regs.r11, 0x202u);
	EXPECT_EQ(cpu().dr[0], 0u);
	EXPECT_FALSE(holding());
}

TEST_F(TfStep, SysretEndsAtRcxThroughALentRegister)
{
	code({0x48, 0x0f, 0x07});	// sysretq
	regs.rcx = 0x401000;
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_EQ(vmcs(GUEST_RFLAGS) & kTF, 0u);
	EXPECT_EQ(cpu().dr[0], 0x401000u);
	guest_user_mode();
	vmcs(GUEST_RIP) = 0x401000;
	vmcs(GUEST_RFLAGS) = 0x246;	// R11's, loaded by SYSRET
	EXPECT_EQ(debug_exit(1u << 0), VT_TF_DONE);
	EXPECT_EQ(vmcs(GUEST_RFLAGS), 0x246u) << "the flags SYSRET loaded stay";
}

TEST_F(TfStep, SyscallWithNoFreeRegisterTakesTfAndCleansR11)
{
	cpu().msrs[MSR_LSTAR] = 0xffffffff81e00000ull;
	vmcs(GUEST_DR7) = 0x400 | 0xff;	// all four in use
	code({0x0f, 0x05});
	guest_user_mode();
	vmcs(GUEST_RIP) = kText;
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_TRUE(vmcs(GUEST_RFLAGS) & kTF);
	regs.r11 = 0x202 | kTF;	// what SYSCALL saved; FMASK cleared TF in RFLAGS
	vmcs(GUEST_RFLAGS) = 0x2;
	ASSERT_EQ(debug_exit(kBS), VT_TF_DONE);
	EXPECT_EQ(regs.r11, 0x202u);
	EXPECT_EQ(vmcs(GUEST_RFLAGS), 0x2u);
}

TEST_F(TfStep, PopfLoadsTheGuestsTf)
{
	code({0x9d});	// popfq of an image with TF: the guest sets its own
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	vmcs(GUEST_RFLAGS) = 0x246 | kTF;
	ASSERT_EQ(debug_exit(kBS), VT_TF_DONE);
	EXPECT_EQ(vmcs(GUEST_RFLAGS), 0x246 | kTF);
}

TEST_F(TfStep, AFaultIsDeliveredCleanAndTheStepEndsAtItsHandler)
{
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	uint32_t pf = 14 | kHardException | kDeliverCode | kValid;
	vmcs(VM_EXIT_INTR_INFO) = pf;
	vmcs(VM_EXIT_INTR_ERROR_CODE) = 2;
	vmcs(EXIT_QUALIFICATION) = 0x7f0000001000ull;
	exit.qual = 0x7f0000001000ull;
	ASSERT_EQ(vt_single_step_on_exception(&vcpu, &exit, pf), VT_TF_REFLECTED);
	EXPECT_EQ(entry_event(), pf);
	EXPECT_EQ(vmcs(VM_ENTRY_EXCEPTION_ERROR_CODE), 2u);
	EXPECT_EQ(cpu().cr2, 0x7f0000001000ull);
	EXPECT_EQ(vmcs(GUEST_RFLAGS) & kTF, 0u) << "the frame gets the guest's RFLAGS";
	EXPECT_EQ(cpu().dr[0], kPfHandler);
	EXPECT_EQ(vmcs(GUEST_DR7) & 0xf00ffu, 1u) << "L0, execute, length 1";
	// The handler's first instruction hits the lent register (a fault: RIP there).
	vmcs(GUEST_RIP) = kPfHandler;
	vmcs(GUEST_RFLAGS) = 0x2;
	EXPECT_EQ(debug_exit(1u << 0), VT_TF_DONE);
	EXPECT_EQ(cpu().dr[0], 0u);
	EXPECT_EQ(vmcs(GUEST_DR7), 0x400u);
	EXPECT_EQ(vmcs(GUEST_RFLAGS), 0x2u) << "the handler's own RFLAGS";
	EXPECT_FALSE(holding());
}

TEST_F(TfStep, TheLentRegisterIsOneTheGuestLeavesDisabled)
{
	vmcs(GUEST_DR7) = 0x400 | 0x3 | (0x3 << 2);	// slots 0 and 1 in use
	cpu().dr[2] = 0x1234;
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	uint32_t pf = 14 | kHardException | kDeliverCode | kValid;
	vmcs(VM_EXIT_INTR_INFO) = pf;
	ASSERT_EQ(vt_single_step_on_exception(&vcpu, &exit, pf), VT_TF_REFLECTED);
	EXPECT_EQ(cpu().dr[2], kPfHandler);
	u64 other = 0;
	EXPECT_EQ(debug_exit((1u << 2) | (1u << 0), &other), VT_TF_DONE);
	EXPECT_EQ(other, 1u) << "slot 0's hit is the guest's own, for its handler";
	EXPECT_EQ(cpu().dr[2], 0x1234u);
	EXPECT_EQ(vmcs(GUEST_DR7), 0x400u | 0xfu);
}

TEST_F(TfStep, WithNoFreeRegisterTheHandlerRunsAsTheStep)
{
	vmcs(GUEST_DR7) = 0x400 | 0xff;
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	uint32_t pf = 14 | kHardException | kDeliverCode | kValid;
	vmcs(VM_EXIT_INTR_INFO) = pf;
	ASSERT_EQ(vt_single_step_on_exception(&vcpu, &exit, pf), VT_TF_REFLECTED);
	EXPECT_TRUE(vmcs(GUEST_RFLAGS) & kTF) << "the trap comes after the handler returns";
	EXPECT_FALSE(holding()) << "the handler may sleep: interrupts flow";
	EXPECT_EQ(vmcs(EXCEPTION_BITMAP), 0u);
	vt_hooks_stats s{};
	vt_hooks_get_stats(&s);
	EXPECT_EQ(s.tf_unhidden, 1u);
	EXPECT_EQ(debug_exit(kBS), VT_TF_DONE);
	EXPECT_EQ(vmcs(GUEST_RFLAGS) & kTF, 0u);
}

TEST_F(TfStep, AFaultWhileDeliveringLetsTheCpuCombineThem)
{
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	uint32_t pf = 14 | kHardException | kDeliverCode | kValid;
	vmcs(VM_EXIT_INTR_INFO) = pf;
	ASSERT_EQ(vt_single_step_on_exception(&vcpu, &exit, pf), VT_TF_REFLECTED);
	ASSERT_EQ(cpu().dr[0], kPfHandler);
	// The #PF's delivery raises a second #PF (its frame's page is gone):
	// a double fault (SDM 3A Table 6-5) that only the CPU may decide.
	vmcs(VM_ENTRY_INTR_INFO_FIELD) = 0;
	vmcs(IDT_VECTORING_INFO_FIELD) = pf;
	ASSERT_EQ(vt_single_step_on_exception(&vcpu, &exit, pf), VT_TF_REFLECTED);
	EXPECT_EQ(entry_event(), 0u) << "the core delivers the first event again";
	EXPECT_EQ(vmcs(EXCEPTION_BITMAP), 0u) << "nothing intercepted: the CPU combines them";
	EXPECT_EQ(cpu().dr[0], 0u);
	EXPECT_TRUE(vmcs(GUEST_RFLAGS) & kTF) << "the step ends after the handler";
}

TEST_F(TfStep, IntNIsInjectedInsteadOfRunUnderTf)
{
	code({0xcd, 0x80});
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_EQ(entry_event(), 0x80u | kSoftInterrupt | kValid);
	EXPECT_EQ(vmcs(VM_ENTRY_INSTRUCTION_LEN), 2u);
	EXPECT_EQ(vmcs(GUEST_RFLAGS) & kTF, 0u);
	EXPECT_EQ(cpu().dr[0], kInt80Handler);
}

TEST_F(TfStep, AnEventAlreadyQueuedIsSteppedInto)
{
	vmcs(VM_ENTRY_INTR_INFO_FIELD) = 14 | kHardException | kDeliverCode | kValid;
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_EQ(vmcs(GUEST_RFLAGS) & kTF, 0u);
	EXPECT_EQ(cpu().dr[0], kPfHandler);
}

TEST_F(TfStep, HltHaltsAndTheStepEndsAtTheNextPoll)
{
	// Under TF, HLT traps only after an interrupt ends the halt (SDM 3A
	// 18.3.1.4), and the step holds interrupts: it must not wait for one.
	code({0xf4});
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_EQ(vmcs(GUEST_RIP), kText + 1) << "past the HLT, as the CPU leaves it";
	EXPECT_EQ(vmcs(GUEST_ACTIVITY_STATE), GUEST_ACTIVITY_HLT);
	EXPECT_EQ(vmcs(GUEST_RFLAGS) & kTF, 0u);
	EXPECT_TRUE(vt_single_step_on_poll(&vcpu, &exit));
	EXPECT_FALSE(holding());
	EXPECT_EQ(vmcs(EXCEPTION_BITMAP), 0u);
	EXPECT_FALSE(vt_single_step_on_poll(&vcpu, &exit)) << "no step armed";
}

TEST_F(TfStep, AHaltedCpuStaysHaltedForTheStep)
{
	vmcs(GUEST_ACTIVITY_STATE) = GUEST_ACTIVITY_HLT;
	vmcs(GUEST_RIP) = kText + 1;	// a halted CPU's RIP is past its HLT
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_EQ(vmcs(GUEST_RIP), kText + 1);
	EXPECT_EQ(vmcs(GUEST_RFLAGS) & kTF, 0u);
	EXPECT_TRUE(vt_single_step_on_poll(&vcpu, &exit));
}

TEST_F(TfStep, APollDoesNotEndAnOrdinaryStep)
{
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_FALSE(vt_single_step_on_poll(&vcpu, &exit));
	EXPECT_TRUE(vmcs(GUEST_RFLAGS) & kTF);
}

TEST_F(TfStep, ParkingUndoesTheStepAndShowsTheGuestsFlags)
{
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_TRUE(vt_single_step_suspend(&vcpu));
	EXPECT_EQ(vmcs(GUEST_RFLAGS), 0x202u);
	EXPECT_FALSE(holding());
	EXPECT_EQ(vmcs(EXCEPTION_BITMAP), 0u);
	EXPECT_FALSE(vt_single_step_suspend(&vcpu)) << "nothing armed any more";
}

TEST_F(TfStep, TheHooksBreakpointInterceptSurvivesTheStep)
{
	// A Z0 set while the step ran takes the #BP intercept (hooks.c).
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	ASSERT_EQ(vt_bp_insert(kText, gpa_of(kText)), 0);
	vt_hooks_on_resume(&vcpu);
	EXPECT_EQ(debug_exit(kBS), VT_TF_DONE);
	EXPECT_TRUE(vmcs(EXCEPTION_BITMAP) & (1u << 3));
	vt_hooks_remove_all();
}

// Branch steps (btf_block.h): BTF with TF traps after the next taken branch
// (SDM Vol. 3B 18.4.3); the bit is the hypervisor's, in the DEBUGCTL that
// VM entry loads (3C 26.3.2.1), never in the one the guest reads.
class BranchStep : public TfStep {
protected:
	void SetUp() override
	{
		TfStep::SetUp();
		hv.caps.flags |= VTICE_CAP_DEBUGCTL_BTF;
		ASSERT_TRUE(hv.ctls.entry & VM_ENTRY_LOAD_DEBUG_CONTROLS);
	}

	bool btf() { return vmcs(GUEST_IA32_DEBUGCTL) & DEBUGCTLMSR_BTF; }
};

TEST_F(BranchStep, SetWhereTheCodeUpToTheBranchIsSafe)
{
	code({0x48, 0x89, 0xc3, 0x74, 0x10, 0xeb, 0x20});	// mov rbx, rax; je; jmp
	ASSERT_EQ(vt_single_step_arm_trace(&vcpu, true), 0);
	EXPECT_TRUE(btf());
	EXPECT_TRUE(vmcs(GUEST_RFLAGS) & kTF);
	EXPECT_EQ(debug_exit(kBS), VT_TF_DONE);
	EXPECT_TRUE(vt_single_step_was_branch(&vcpu));
	EXPECT_FALSE(btf()) << "only for the step";
	EXPECT_EQ(vmcs(GUEST_RFLAGS) & kTF, 0u);
}

TEST_F(BranchStep, APushfBeforeTheBranchKeepsItPlain)
{
	code({0x48, 0x89, 0xc3, 0x9c, 0xeb, 0x20});	// mov; pushfq; jmp
	ASSERT_EQ(vt_single_step_arm_trace(&vcpu, true), 0);
	EXPECT_FALSE(btf());
	EXPECT_TRUE(vmcs(GUEST_RFLAGS) & kTF) << "a plain step up to it";
	EXPECT_EQ(debug_exit(kBS), VT_TF_DONE);
	EXPECT_FALSE(vt_single_step_was_branch(&vcpu));
}

TEST_F(BranchStep, AnyoneElsesStepTurnsItIntoAPlainOne)
{
	code({0x48, 0x89, 0xc3, 0xeb, 0x20});
	ASSERT_EQ(vt_single_step_arm_trace(&vcpu, true), 0);
	ASSERT_TRUE(btf());
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);	// a watchpoint's access, say
	EXPECT_FALSE(btf());
	EXPECT_EQ(debug_exit(kBS), VT_TF_DONE);
	EXPECT_FALSE(vt_single_step_was_branch(&vcpu));
}

TEST_F(BranchStep, NotWhereTheCpuDropsBtf)
{
	hv.caps.flags &= ~VTICE_CAP_DEBUGCTL_BTF;	// Bochs: BTF reads back 0
	code({0x48, 0x89, 0xc3, 0xeb, 0x20});
	ASSERT_EQ(vt_single_step_arm_trace(&vcpu, true), 0);
	EXPECT_FALSE(btf());
	EXPECT_TRUE(vmcs(GUEST_RFLAGS) & kTF);
}

TEST_F(BranchStep, NotWhenTheTracerAsksForAPlainOne)
{
	code({0x48, 0x89, 0xc3, 0xeb, 0x20});
	ASSERT_EQ(vt_single_step_arm_trace(&vcpu, false), 0);
	EXPECT_FALSE(btf());
}

TEST_F(BranchStep, TheGuestReadsItsOwnDebugctl)
{
	code({0x48, 0x89, 0xc3, 0xeb, 0x20});
	ASSERT_EQ(vt_single_step_arm_trace(&vcpu, true), 0);
	vt_guest_regs r{};
	r.rcx = MSR_IA32_DEBUGCTLMSR;
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_READ, 0, r));
	EXPECT_EQ(r.rax | r.rdx << 32, 0u);
	EXPECT_TRUE(btf()) << "still the step's";
}

TEST_F(BranchStep, NoStepOverAHaltTheTracerCouldNotEnd)
{
	code({0xf4});
	EXPECT_EQ(vt_single_step_arm_trace(&vcpu, true), -VT_EAGAIN);
	EXPECT_FALSE(holding()) << "nothing armed";
	EXPECT_EQ(vmcs(GUEST_RIP), kText);
	vmcs(GUEST_ACTIVITY_STATE) = GUEST_ACTIVITY_HLT;
	vmcs(GUEST_RIP) = kText + 1;
	EXPECT_EQ(vt_single_step_arm_trace(&vcpu, true), -VT_EAGAIN);
	// An interrupt to deliver wakes it: the step ends in the handler.
	vmcs(VM_ENTRY_INTR_INFO_FIELD) = 14 | kHardException | kDeliverCode | kValid;
	EXPECT_EQ(vt_single_step_arm_trace(&vcpu, true), 0);
	EXPECT_EQ(cpu().dr[0], kPfHandler);
}

TEST_F(BranchStep, WhileTheTracerStepsWithTfEveryStepDoes)
{
	hv.caps.flags |= VTICE_CAP_MTF;
	vt_single_step_trace_tf(true);
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_FALSE(mtf_armed());
	EXPECT_TRUE(vmcs(GUEST_RFLAGS) & kTF);
	vt_single_step_trace_tf(false);
}

TEST_F(TfStep, MtfIsPreferredWhereTheCpuHasIt)
{
	hv.caps.flags |= VTICE_CAP_MTF;
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_TRUE(mtf_armed());
	EXPECT_EQ(vmcs(GUEST_RFLAGS) & kTF, 0u);
	vt_single_step_disarm(&vcpu);
	vt_single_step_prefer_tf(true);
	ASSERT_EQ(vt_single_step_arm(&vcpu), 0);
	EXPECT_FALSE(mtf_armed());
	EXPECT_TRUE(vmcs(GUEST_RFLAGS) & kTF) << "step_tf=1 takes the fallback";
}

}  // namespace
}  // namespace vtice::fake
