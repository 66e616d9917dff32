// The sampling profiler on a virtualized fake CPU: the VMCALL arms this
// CPU's VMX-preemption timer (SDM 3C 26.5.1) with the save control beside
// it (26.2.1.2 allows that one only with the timer), every expiry writes
// one PROFILE_SAMPLE group (records.h), and the stub's poll, sharing the
// timer, keeps its own period. Expected stacks, tasks and counts are what
// the test put in guest memory or computes from the periods.
#include "syscall_fixture.hpp"

using namespace vtice::fake;

namespace {

constexpr uint64_t kStackTop = 0xffffc90000004000ull, kStackPage = 0x302000;
constexpr uint64_t kKernelRip = 0xffffffff81234567ull;
constexpr uint32_t kRingRecords = 1024;

class Profile : public SyscallFixture {
protected:
	void SetUp() override
	{
		SyscallFixture::SetUp();
		// A ring that holds a few whole samples (each up to 132 records).
		ring_mem.assign(VTICE_RING_HEADER_SIZE + kRingRecords * sizeof(vtice_record), 0);
		vt_ring_init(&vcpu.ring, ring_mem.data(), kRingRecords, 0);
		// One mapped stack page, its words numbered, the page above it unmapped.
		map(cpu().vmcs[GUEST_CR3], 4, kStackTop - 0x1000, kStackPage);
		for (uint64_t i = 0; i < 512; i++) {
			uint64_t word = 0x5700000000000000ull | i;
			put(kStackPage + i * 8, &word, 8);
		}
	}

	uint64_t profile_vmcall(uint64_t period_tsc, uint64_t stack_bytes, uint64_t *samples = nullptr)
	{
		vt_guest_regs r = keyed_vmcall(VTICE_VMCALL_PROFILE, period_tsc, stack_bytes);
		if (samples)
			*samples = r.rdx;
		return r.rax;
	}

	// Armed for one task: pid (its pid or tgid) and comm, as
	// VTICE_VMCALL_PROFILE packs them (vmcall.h).
	uint64_t profile_vmcall_for(uint32_t pid, const char *comm, uint64_t stack_bytes = 0)
	{
		uint64_t c[2] = {};
		std::memcpy(c, comm, std::min(std::strlen(comm), sizeof(c)));
		return keyed_vmcall(VTICE_VMCALL_PROFILE, 1'000'000, stack_bytes | (uint64_t)pid << 32, c[0], c[1]).rax;
	}

	// The timer runs out with the guest in the kernel at kKernelRip, RSP = rsp.
	void expire_in_kernel(uint64_t rsp, uint64_t rbp = 0xbbbb)
	{
		guest_kernel_mode();
		cpu().vmcs[GUEST_RIP] = kKernelRip;
		cpu().vmcs[GUEST_RSP] = rsp;
		expire(rbp);
	}

	void expire(uint64_t rbp = 0)
	{
		cpu().vmcs[VMX_PREEMPTION_TIMER_VALUE] = 0;	// saved at expiry
		vt_guest_regs r{};
		r.rbp = rbp;
		ASSERT_TRUE(vm_exit(EXIT_REASON_PREEMPTION_TIMER, 0, r));
	}

	uint64_t pin() { return cpu().vmcs[PIN_BASED_VM_EXEC_CONTROL]; }
	uint64_t exit_ctls() { return cpu().vmcs[VM_EXIT_CONTROLS]; }

	static std::vector<vtice_record> data_of(const std::vector<vtice_record> &recs, uint32_t kind)
	{
		std::vector<vtice_record> out;
		for (size_t i = 1; i < recs.size(); i++)
			if (recs[i].type == VTICE_REC_SYSCALL_DATA && recs[i].flags == kind)
				out.push_back(recs[i]);
		return out;
	}
};

TEST_F(Profile, ArmingStartsTheTimerWithItsSaveControl)
{
	ASSERT_EQ(pin() & PIN_BASED_VMX_PREEMPTION_TIMER, 0u) << "no stub: the timer is off at load";
	ASSERT_EQ(profile_vmcall(1'000'000, 256), (uint64_t)VTICE_VMCALL_OK);
	EXPECT_TRUE(pin() & PIN_BASED_VMX_PREEMPTION_TIMER);
	EXPECT_TRUE(exit_ctls() & VM_EXIT_SAVE_VMX_PREEMPTION_TIMER);
	uint32_t shift = cpu().msrs[MSR_IA32_VMX_MISC] & 0x1f;
	EXPECT_EQ(cpu().vmcs[VMX_PREEMPTION_TIMER_VALUE], 1'000'000ull >> shift);
	ASSERT_EQ(profile_vmcall(0, 0), (uint64_t)VTICE_VMCALL_OK);
	EXPECT_EQ(pin() & PIN_BASED_VMX_PREEMPTION_TIMER, 0u);
	EXPECT_EQ(exit_ctls() & VM_EXIT_SAVE_VMX_PREEMPTION_TIMER, 0u)
		<< "26.2.1.2: saving the timer without the timer fails VM entry";
}

TEST_F(Profile, AKernelSampleCarriesRipTaskAndTheStack)
{
	ASSERT_EQ(profile_vmcall(1'000'000, 256), (uint64_t)VTICE_VMCALL_OK);
	uint64_t rsp = kStackTop - 0x800;
	expire_in_kernel(rsp, 0xfeedbeef);
	auto recs = records();
	ASSERT_FALSE(recs.empty());
	const vtice_record &head = recs[0];
	EXPECT_EQ(head.type, VTICE_REC_PROFILE_SAMPLE);
	EXPECT_EQ(head.u.raw[0], kKernelRip);
	EXPECT_EQ(head.u.raw[1], rsp);
	EXPECT_EQ(head.flags & ~VTICE_PROFILE_COUNT_MASK, 0u) << "kernel, not halted";
	ASSERT_EQ(head.flags & VTICE_PROFILE_COUNT_MASK, recs.size() - 1);
	auto regs = data_of(recs, VTICE_SYSCALL_DATA_REGS);
	ASSERT_EQ(regs.size(), 1u);
	EXPECT_EQ(regs[0].u.raw[0], 0xfeedbeefu);
	auto task = data_of(recs, VTICE_SYSCALL_DATA_TASK);
	ASSERT_EQ(task.size(), 1u);
	EXPECT_EQ(task[0].u.raw[0], 4242u | (4240ull << 32));
	auto comm = data_of(recs, VTICE_SYSCALL_DATA_COMM);
	ASSERT_EQ(comm.size(), 1u);
	EXPECT_STREQ(reinterpret_cast<const char *>(comm[0].u.raw), "vtsys");
	auto stack = data_of(recs, VTICE_SYSCALL_DATA_STACK);
	ASSERT_EQ(stack.size(), 256u / 16);
	uint64_t first = (rsp - (kStackTop - 0x1000)) / 8;
	for (size_t i = 0; i < stack.size(); i++) {
		EXPECT_EQ(stack[i].u.raw[0], 0x5700000000000000ull | (first + 2 * i)) << i;
		EXPECT_EQ(stack[i].u.raw[1], 0x5700000000000000ull | (first + 2 * i + 1)) << i;
	}
	uint64_t samples = 0;
	profile_vmcall(0, 0, &samples);
	EXPECT_EQ(samples, 1u);
}

// The task in guest memory is pid 4242, tgid 4240, comm "vtsys"
// (syscall_fixture.hpp): root records its samples only when it passes.
TEST_F(Profile, WithAFilterOnlyThatTasksSamplesAreRecorded)
{
	struct Case {
		uint32_t pid;
		const char *comm;
		bool recorded;
	} cases[] = {
		{0, "vtsys", true},	{0, "bash", false},	{4242, "", true},  {4240, "", true},
		{999, "", false},	{4240, "vtsys", true},	{4240, "bash", false},
	};
	for (const Case &c : cases) {
		vcpu.ring.hdr->head = vcpu.ring.hdr->tail = 0;
		ASSERT_EQ(profile_vmcall_for(c.pid, c.comm), (uint64_t)VTICE_VMCALL_OK);
		expire_in_kernel(kStackTop - 0x800);
		auto recs = records();
		ASSERT_EQ(!recs.empty(), c.recorded) << "pid " << c.pid << " comm '" << c.comm << "'";
		EXPECT_TRUE(recs.empty() || recs[0].type == VTICE_REC_PROFILE_SAMPLE);
	}
	uint64_t samples = 0;
	profile_vmcall(0, 0, &samples);
	EXPECT_EQ(samples, 4u) << "only the recorded samples count";
}

TEST_F(Profile, AFilterCommWithoutItsNulIsRefused)
{
	EXPECT_EQ(profile_vmcall_for(0, "sixteen-bytes-xx"), (uint64_t)VTICE_VMCALL_EINVAL);
}

TEST_F(Profile, TheStackEndsWhereItsPagesDo)
{
	ASSERT_EQ(profile_vmcall(1'000'000, VTICE_PROFILE_STACK_MAX), (uint64_t)VTICE_VMCALL_OK);
	expire_in_kernel(kStackTop - 64);	// 64 bytes below an unmapped page
	auto stack = data_of(records(), VTICE_SYSCALL_DATA_STACK);
	EXPECT_EQ(stack.size(), 64u / 16);
	expire_in_kernel(0xffffc90000100000ull);	// no page at all: no stack, still a sample
	auto recs = records();
	size_t heads = 0;
	for (auto &r : recs)
		heads += r.type == VTICE_REC_PROFILE_SAMPLE;
	EXPECT_EQ(heads, 2u);
}

// A guest can aim RSP at a frame the shield hides (vtice's own state): the
// copy must hold what the guest would read there, the decoy, and no byte
// of root's frame (shield.h, vt_shield_seen_pa).
TEST_F(Profile, AStackAimedAtAHiddenFrameCopiesTheDecoy)
{
	ASSERT_EQ(vt_shield_hide(&hv.shield, &hv.ept, kStackPage, 1), 0);
	for (uint64_t i = 0; i < 512; i++) {
		uint64_t word = 0xdec0000000000000ull | i;
		put(hv.shield.decoy_pa + i * 8, &word, 8);	// the decoy as GuestPages holds it
	}
	ASSERT_EQ(profile_vmcall(1'000'000, 256), (uint64_t)VTICE_VMCALL_OK);
	expire_in_kernel(kStackTop - 0x800);
	auto stack = data_of(records(), VTICE_SYSCALL_DATA_STACK);
	ASSERT_EQ(stack.size(), 256u / 16);
	for (size_t i = 0; i < stack.size(); i++) {
		EXPECT_EQ(stack[i].u.raw[0], 0xdec0000000000000ull | (0x800 / 8 + 2 * i)) << i;
		EXPECT_EQ(stack[i].u.raw[1] >> 48, 0xdec0u) << i;
	}
}

TEST_F(Profile, UserAndHaltedSamplesAreMarked)
{
	ASSERT_EQ(profile_vmcall(1'000'000, 256), (uint64_t)VTICE_VMCALL_OK);
	guest_user_mode();
	cpu().vmcs[GUEST_RIP] = kUserRip;
	cpu().vmcs[GUEST_RSP] = kStackTop - 0x800;
	expire();
	auto recs = records();
	ASSERT_FALSE(recs.empty());
	EXPECT_TRUE(recs[0].flags & VTICE_PROFILE_USER);
	EXPECT_TRUE(data_of(recs, VTICE_SYSCALL_DATA_STACK).empty()) << "a user stack is not the kernel's";
	size_t user_group = recs.size();
	cpu().vmcs[GUEST_ACTIVITY_STATE] = 1;	// HLT
	expire_in_kernel(kStackTop - 0x800);
	recs = records();
	ASSERT_GT(recs.size(), user_group);
	EXPECT_TRUE(recs[user_group].flags & VTICE_PROFILE_HALTED);
	EXPECT_FALSE(recs[user_group].flags & VTICE_PROFILE_USER);
}

TEST_F(Profile, BadRequestsAreRefusedAndChangeNothing)
{
	EXPECT_EQ(profile_vmcall(1'000'000, 17), (uint64_t)VTICE_VMCALL_EINVAL);
	EXPECT_EQ(profile_vmcall(1'000'000, VTICE_PROFILE_STACK_MAX + 16), (uint64_t)VTICE_VMCALL_EINVAL);
	EXPECT_EQ(profile_vmcall(1ull << 40, 0), (uint64_t)VTICE_VMCALL_EINVAL) << "more than 32 bits of ticks";
	EXPECT_EQ(pin() & PIN_BASED_VMX_PREEMPTION_TIMER, 0u);
	expire_in_kernel(kStackTop - 0x800);
	EXPECT_TRUE(records().empty()) << "an expiry nobody armed records nothing";
}

TEST_F(Profile, AFullRingLosesWholeSamples)
{
	ASSERT_EQ(profile_vmcall(1'000'000, VTICE_PROFILE_STACK_MAX), (uint64_t)VTICE_VMCALL_OK);
	for (int i = 0; i < 20; i++)
		expire_in_kernel(kStackTop - 0x1000);
	auto recs = records();
	size_t i = 0, whole = 0;
	while (i < recs.size()) {
		ASSERT_EQ(recs[i].type, VTICE_REC_PROFILE_SAMPLE) << "a group is stored whole or not at all";
		i += 1 + (recs[i].flags & VTICE_PROFILE_COUNT_MASK);
		whole++;
	}
	EXPECT_EQ(i, recs.size());
	EXPECT_LT(whole, 20u);
	uint64_t samples = 0;
	profile_vmcall(0, 0, &samples);
	EXPECT_EQ(samples, whole) << "only samples stored are counted";
}

// The debug stub's profiler (profile.h, struct vt_profile_stub): set while
// every CPU is parked, each CPU starts or stops at its own sync; while it
// is on, the kernel side's VMCALL is refused, and its off never stops a
// profiler the kernel side armed.
class ProfileStub : public Profile {
protected:
	int stub_set(bool on, uint64_t period_tsc = 1'000'000, uint32_t stack_bytes = 0, const char *comm = "")
	{
		vt_sys_filter f{};
		std::strncpy(f.comm, comm, sizeof(f.comm) - 1);
		return vt_profile_stub_set(&hv, on, period_tsc, stack_bytes, &f);
	}
	bool timer_on() { return pin() & PIN_BASED_VMX_PREEMPTION_TIMER; }
};

TEST_F(ProfileStub, EachCpuStartsAtItsSyncWithTheStubsPeriodStackAndFilter)
{
	uint32_t shift = cpu().msrs[MSR_IA32_VMX_MISC] & 0x1f;
	ASSERT_EQ(stub_set(true, 3'000'000, 256, "nobody"), 0);
	EXPECT_FALSE(timer_on()) << "nothing until the CPU itself syncs";
	vt_profile_stub_sync(&vcpu);
	EXPECT_TRUE(timer_on());
	EXPECT_EQ(cpu().vmcs[VMX_PREEMPTION_TIMER_VALUE], 3'000'000ull >> shift);
	expire_in_kernel(kStackTop - 0x800);
	EXPECT_TRUE(records().empty()) << "the task is not 'nobody'";
	ASSERT_EQ(stub_set(true, 3'000'000, 256), 0);	// a new run, the CPU still sampling
	vt_profile_stub_sync(&vcpu);
	expire_in_kernel(kStackTop - 0x800);
	auto recs = records();
	ASSERT_FALSE(recs.empty());
	EXPECT_EQ(recs[0].type, VTICE_REC_PROFILE_SAMPLE);
	EXPECT_EQ(data_of(recs, VTICE_SYSCALL_DATA_STACK).size(), 256u / 16) << "the stub's stack bytes";
	ASSERT_EQ(stub_set(false), 0);
	vt_profile_stub_sync(&vcpu);
	EXPECT_FALSE(timer_on());
	EXPECT_EQ(exit_ctls() & VM_EXIT_SAVE_VMX_PREEMPTION_TIMER, 0u);
}

TEST_F(ProfileStub, TheKernelSideIsRefusedWhileTheStubsProfilerIsOn)
{
	ASSERT_EQ(stub_set(true), 0);
	vt_profile_stub_sync(&vcpu);
	EXPECT_EQ(profile_vmcall(2'000'000, 0), (uint64_t)VTICE_VMCALL_EBUSY);
	EXPECT_EQ(profile_vmcall(0, 0), (uint64_t)VTICE_VMCALL_EBUSY) << "nor stopped by it";
	EXPECT_TRUE(timer_on());
	ASSERT_EQ(stub_set(false), 0);
	vt_profile_stub_sync(&vcpu);
	EXPECT_EQ(profile_vmcall(2'000'000, 0), (uint64_t)VTICE_VMCALL_OK) << "free again";
}

// Two runs back to back with the machine stopped between them: the first's
// off has not reached the CPU, whose sampling is still the stub's (the
// second run may arm); only the kernel side's keeps the stub out.
TEST_F(ProfileStub, AnOffNotYetAppliedLeavesTheSamplingTheStubs)
{
	ASSERT_EQ(stub_set(true), 0);
	vt_profile_stub_sync(&vcpu);
	ASSERT_EQ(stub_set(false), 0);
	EXPECT_TRUE(timer_on()) << "still parked";
	EXPECT_FALSE(vt_profile_kernel_sampling(&vcpu));
	ASSERT_EQ(stub_set(false), 0);
	vt_profile_stub_sync(&vcpu);
	ASSERT_EQ(profile_vmcall(2'000'000, 0), (uint64_t)VTICE_VMCALL_OK);
	EXPECT_TRUE(vt_profile_kernel_sampling(&vcpu));
}

TEST_F(ProfileStub, TheStubsOffLeavesTheKernelSidesProfilerAlone)
{
	ASSERT_EQ(profile_vmcall(2'000'000, 0), (uint64_t)VTICE_VMCALL_OK);
	ASSERT_EQ(stub_set(false), 0);	// a detach with nothing of the stub's sampling
	vt_profile_stub_sync(&vcpu);
	EXPECT_TRUE(timer_on());
}

// A CPU taken offline and back keeps its vCPU state (made at load); its
// fresh VMCS does not sample, and the stub's profiler starts again as the
// CPU leaves its next stop.
TEST_F(ProfileStub, ACpuBackOnlineSamplesAgainAtItsNextSync)
{
	ASSERT_EQ(stub_set(true, 3'000'000), 0);
	vt_profile_stub_sync(&vcpu);
	ASSERT_TRUE(timer_on());
	ASSERT_EQ(vt_vcpu_devirtualize(&vcpu), 0);
	ASSERT_EQ(vt_vcpu_virtualize(&vcpu), 0);
	EXPECT_FALSE(timer_on()) << "no stub poll here: a fresh VMCS runs no timer";
	EXPECT_EQ(vcpu.timer.sample_ticks, 0u);
	vt_profile_stub_sync(&vcpu);
	EXPECT_TRUE(timer_on());
	expire_in_kernel(kStackTop - 0x800);
	EXPECT_FALSE(records().empty());
}

TEST_F(ProfileStub, BadRequestsAreRefusedAndStartNothing)
{
	EXPECT_EQ(stub_set(true, 1'000'000, 17), -VT_EINVAL);
	EXPECT_EQ(stub_set(true, 1'000'000, VTICE_PROFILE_STACK_MAX + 16), -VT_EINVAL);
	EXPECT_EQ(stub_set(true, 1ull << 40), -VT_EINVAL) << "more than 32 bits of ticks";
	EXPECT_EQ(stub_set(true, 0), -VT_EINVAL);
	vt_profile_stub_sync(&vcpu);
	EXPECT_FALSE(timer_on());
}

// The stub polls every 50 M TSC cycles from load; the profiler samples every
// 20 M. Over 1,000 M cycles of guest time, both keep their own period.
int g_polls;
const vt_callbacks kPollCallbacks = {
	.preempt_timer = [](vt_vcpu *, vt_exit *) { g_polls++; return true; },
};

class ProfileWithStub : public Profile {
protected:
	void SetUp() override
	{
		HvFixture::SetUp();
		g_polls = 0;
		ASSERT_EQ(init(), 0);
		ASSERT_EQ(vt_hv_enable_preempt_timer(&hv, 50'000'000), 0);
		ASSERT_EQ(vt_vcpu_virtualize(&vcpu), 0);
		vt_hv_set_callbacks(&hv, &kPollCallbacks);
		ring_mem.assign(VTICE_RING_HEADER_SIZE + kRingRecords * sizeof(vtice_record), 0);
		vt_ring_init(&vcpu.ring, ring_mem.data(), kRingRecords, 0);
	}
};

TEST_F(ProfileWithStub, PollAndSamplesKeepTheirOwnPeriods)
{
	uint32_t shift = cpu().msrs[MSR_IA32_VMX_MISC] & 0x1f;
	ASSERT_EQ(profile_vmcall(20'000'000, 0), (uint64_t)VTICE_VMCALL_OK);
	uint64_t ran = 0, total = 1'000'000'000ull >> shift;
	while (ran < total) {
		uint64_t loaded = cpu().vmcs[VMX_PREEMPTION_TIMER_VALUE];
		ASSERT_GT(loaded, 0u);
		ran += loaded;
		guest_kernel_mode();
		expire();
	}
	EXPECT_EQ(ran, total);
	EXPECT_EQ(g_polls, 1'000 / 50);
	uint64_t samples = 0;
	ASSERT_EQ(profile_vmcall(0, 0, &samples), (uint64_t)VTICE_VMCALL_OK);
	EXPECT_EQ(samples, 1'000u / 20);
	EXPECT_TRUE(pin() & PIN_BASED_VMX_PREEMPTION_TIMER) << "the stub still polls";
	EXPECT_EQ(cpu().vmcs[VMX_PREEMPTION_TIMER_VALUE], 50'000'000ull >> shift);
}

}  // namespace
