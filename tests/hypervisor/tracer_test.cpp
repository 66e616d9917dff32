// The hypervisor's branch tracer (debug/tracer.c) on the fake CPU. The
// oracle is the SDM and the instruction set: between two VM entries with
// the monitor trap flag set, one instruction runs or one event is delivered
// (Vol. 3C 26.7.2); an instruction that falls through leaves RIP at its end
// (its length from the encoding, Vol. 2 ch. 2); a taken JMP rel8 goes to
// the end plus the displacement; an event lands on its IDT gate's handler
// (3A 6.14.1). Whatever the tracer records must agree with that.
#include "hooks_fixture.hpp"

extern "C" {
#include "tracer.h"
}

namespace vtice::fake {
namespace {

constexpr uint64_t kText = kKernelBase + 0x1000;
constexpr uint64_t kIdt = kKernelBase + 0x20000;
constexpr uint64_t kCurrentPtr = kKernelBase + 0x30000;	// this CPU's current_task
constexpr uint64_t kTimerHandler = 0xffffffff81a00040ull, kOtherCode = 0xffffffff81400000ull;
constexpr uint64_t kTask = 0xffff888001234000ull, kOtherTask = 0xffff888005678000ull;
constexpr uint32_t kRecords = 128;	// one page of records

std::vector<uint8_t> *g_ram;

extern "C" int tracer_mem(const vt_vcpu *, u64 gva, void *buf, u32 len, bool write)
{
	u64 gpa;
	if (write || fake_translate(0, gva, &gpa) || fake_translate(0, gva + len - 1, &gpa))
		return -14;
	memcpy(buf, g_ram->data() + (gva - kKernelBase), len);
	return static_cast<int>(len);
}

class Tracer : public HooksFixture {
protected:
	u64 task_ptr[1] = {kCurrentPtr};

	void SetUp() override
	{
		HooksFixture::SetUp();
		g_ram = &ram;
		start();
		vt_tracer_config cfg{nullptr, 1, kRecords, task_ptr, tracer_mem};
		ASSERT_EQ(vt_tracer_init(&hv, &cfg), 0);
		vmcs(GUEST_IDTR_BASE) = kIdt;
		vmcs(GUEST_IDTR_LIMIT) = 256 * 16 - 1;
		gate(0x20, kTimerHandler);
		set_current(kTask);
	}

	void TearDown() override
	{
		vt_tracer_fini();
		HooksFixture::TearDown();
	}

	uint64_t &vmcs(uint32_t field) { return cpu().vmcs[field]; }
	uint8_t *at(uint64_t gva) { return ram.data() + (gva - kKernelBase); }
	void code(uint64_t where, std::initializer_list<uint8_t> bytes) { std::copy(bytes.begin(), bytes.end(), at(where)); }
	void set_current(uint64_t task) { memcpy(at(kCurrentPtr), &task, 8); }
	bool mtf_armed() { return vmcs(CPU_BASED_VM_EXEC_CONTROL) & CPU_BASED_MONITOR_TRAP_FLAG; }

	void gate(uint32_t v, uint64_t handler)
	{
		uint64_t lo = (handler & 0xffff) | (0x10ull << 16) | (0x8eull << 40) | ((handler >> 16 & 0xffff) << 48);
		uint64_t hi = handler >> 32;
		memcpy(at(kIdt + v * 16), &lo, 8);
		memcpy(at(kIdt + v * 16 + 8), &hi, 8);
	}

	// VM entry at `from`, then the MTF exit at `to`.
	bool step(uint64_t from, uint64_t to)
	{
		vmcs(GUEST_RIP) = from;
		vt_tracer_pre_entry(&vcpu);
		vmcs(GUEST_RIP) = to;
		return vt_tracer_on_mtf(&vcpu, &exit);
	}

	const vtice_record *record(uint64_t i) { return vt_tracer_record(0, i); }
};

TEST_F(Tracer, EnablingArmsMtfAtTheNextEntryAndDisablingLetsItGo)
{
	ASSERT_EQ(vt_tracer_enable(0), 0);
	vmcs(GUEST_RIP) = kText;
	vt_tracer_pre_entry(&vcpu);
	EXPECT_TRUE(mtf_armed());
	EXPECT_TRUE(vt_tracer_on_mtf(&vcpu, &exit)) << "the tracer's own step";
	ASSERT_EQ(vt_tracer_disable(0), 0);
	vt_tracer_pre_entry(&vcpu);
	EXPECT_FALSE(vt_tracer_on_mtf(&vcpu, &exit)) << "unclaimed: the core clears MTF";
	EXPECT_EQ(vt_tracer_enable(5), -22) << "no CPU 5";
}

TEST_F(Tracer, FallThroughAndNotTakenJccAreNotBranches)
{
	code(kText, {0x48, 0x89, 0xc3, 0x74, 0x10});	// mov rbx, rax; je +0x10
	ASSERT_EQ(vt_tracer_enable(0), 0);
	EXPECT_TRUE(step(kText, kText + 3));
	EXPECT_TRUE(step(kText + 3, kText + 5)) << "je not taken";
	EXPECT_TRUE(step(kText + 5, kText + 5)) << "a REP iteration leaves RIP";
	EXPECT_EQ(vt_tracer_count(0), 0u);
}

TEST_F(Tracer, ATakenJumpIsABranchToItsTarget)
{
	code(kText, {0xeb, 0x10});	// jmp +0x10
	ASSERT_EQ(vt_tracer_enable(0), 0);
	step(kText, kText + 2 + 0x10);
	ASSERT_EQ(vt_tracer_count(0), 1u);
	EXPECT_EQ(record(0)->type, VTICE_REC_BRANCH);
	EXPECT_EQ(record(0)->u.branch.from, kText);
	EXPECT_EQ(record(0)->u.branch.to, kText + 0x12);
	EXPECT_EQ(record(0)->flags, VTICE_BRANCH_FROM_STEP);
}

TEST_F(Tracer, AnInterruptIsFlaggedAsync)
{
	code(kText, {0x48, 0x89, 0xc3});	// mov rbx, rax: it does not branch
	ASSERT_EQ(vt_tracer_enable(0), 0);
	step(kText, kTimerHandler);
	ASSERT_EQ(vt_tracer_count(0), 1u);
	EXPECT_EQ(record(0)->flags, VTICE_BRANCH_FROM_STEP | VTICE_BRANCH_ASYNC);
	EXPECT_EQ(record(0)->u.branch.from, kText) << "the instruction it interrupted";
}

TEST_F(Tracer, AJumpThatLandsElsewhereWasInterrupted)
{
	code(kText, {0xeb, 0x10});	// jmp +0x10, but the CPU is at the timer handler
	ASSERT_EQ(vt_tracer_enable(0), 0);
	step(kText, kTimerHandler);
	ASSERT_EQ(vt_tracer_count(0), 1u);
	EXPECT_TRUE(record(0)->flags & VTICE_BRANCH_ASYNC);
}

TEST_F(Tracer, ARetIsABranchUnlessItLandsOnAHandler)
{
	code(kText, {0xc3});	// ret
	ASSERT_EQ(vt_tracer_enable(0), 0);
	step(kText, kOtherCode);
	step(kText, kTimerHandler);
	ASSERT_EQ(vt_tracer_count(0), 2u);
	EXPECT_FALSE(record(0)->flags & VTICE_BRANCH_ASYNC);
	EXPECT_TRUE(record(1)->flags & VTICE_BRANCH_ASYNC);
}

TEST_F(Tracer, Int3ToItsHandlerIsTheInstructionsOwn)
{
	code(kText, {0xcc});
	code(kText + 0x10, {0x3e, 0xcc});	// a prefix does not change that
	gate(3, kOtherCode);
	ASSERT_EQ(vt_tracer_enable(0), 0);
	step(kText, kOtherCode);
	step(kText + 0x10, kOtherCode);
	ASSERT_EQ(vt_tracer_count(0), 2u);
	EXPECT_FALSE(record(0)->flags & VTICE_BRANCH_ASYNC);
	EXPECT_FALSE(record(1)->flags & VTICE_BRANCH_ASYNC);
}

TEST_F(Tracer, OtherTasksAreSteppedButNotRecorded)
{
	code(kText, {0xeb, 0x10});
	vt_tracer_set_filter(kTask);
	ASSERT_EQ(vt_tracer_enable(0), 0);
	set_current(kOtherTask);
	EXPECT_TRUE(step(kText, kText + 0x12));
	EXPECT_EQ(vt_tracer_count(0), 0u);
	set_current(kTask);
	step(kText, kText + 0x12);
	EXPECT_EQ(vt_tracer_count(0), 1u);
	vt_tracer_stats s;
	vt_tracer_get_stats(&s);
	EXPECT_EQ(s.filtered, 1u);
	vt_tracer_set_filter(0);
}

TEST_F(Tracer, CurrentMeansTheTaskRunningWhenTheTraceStarts)
{
	code(kText, {0xeb, 0x10});
	vt_tracer_set_filter(VT_TRACE_TASK_CURRENT);
	ASSERT_EQ(vt_tracer_enable(0), 0);
	step(kText, kText + 0x12);	// starts with kTask current
	set_current(kOtherTask);
	step(kText, kText + 0x12);
	EXPECT_EQ(vt_tracer_count(0), 1u) << "only kTask's jump";
	vt_tracer_set_filter(0);
}

TEST_F(Tracer, UserCodeIsNotRecordedButEntriesFromItAre)
{
	code(kText, {0xeb, 0x10});
	ASSERT_EQ(vt_tracer_enable(0), 0);
	vmcs(GUEST_SS_AR_BYTES) |= 3u << 5;	// DPL 3: CPL 3 (SDM 3A 5.5)
	step(kText, kText + 0x12);
	EXPECT_EQ(vt_tracer_count(0), 0u) << "both ends in user mode";
	vmcs(GUEST_RIP) = kText;
	vt_tracer_pre_entry(&vcpu);
	vmcs(GUEST_SS_AR_BYTES) &= ~(3u << 5);
	vmcs(GUEST_RIP) = kTimerHandler;
	vt_tracer_on_mtf(&vcpu, &exit);
	EXPECT_EQ(vt_tracer_count(0), 1u) << "user -> kernel is kept";
}

TEST_F(Tracer, AFullBufferCountsWhatItDrops)
{
	code(kText, {0xeb, 0x10});
	ASSERT_EQ(vt_tracer_enable(0), 0);
	for (uint32_t i = 0; i < kRecords + 5; i++)
		step(kText, kText + 0x12);
	vt_tracer_stats s;
	vt_tracer_get_stats(&s);
	EXPECT_EQ(s.records, kRecords);
	EXPECT_EQ(s.dropped, 5u);
	ASSERT_EQ(vt_tracer_enable(0), 0) << "a new trace starts empty";
	vt_tracer_get_stats(&s);
	EXPECT_EQ(s.records + s.dropped, 0u);
}

TEST_F(Tracer, UndecodableBytesAreRecordedAndCounted)
{
	ASSERT_EQ(vt_tracer_enable(0), 0);
	step(kKernelBase - 0x1000, kText);	// not mapped: nothing to decode
	ASSERT_EQ(vt_tracer_count(0), 1u);
	vt_tracer_stats s;
	vt_tracer_get_stats(&s);
	EXPECT_EQ(s.undecoded, 1u);
}

}  // namespace
}  // namespace vtice::fake
