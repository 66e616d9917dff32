// VMX root's event log (core/root_log.c): root writes fixed events into
// its vCPU's exit-counts page, which the kernel reads and may scribble on;
// the kernel side drains them in order and says how many it missed.
#include "hv_fixture.hpp"

#include <vector>

namespace vtice::fake {
namespace {

class RootLog : public HvFixture {
protected:
	std::vector<vt_root_event> printed;

	void SetUp() override
	{
		HvFixture::SetUp();
		virtualize();
	}

	u64 drain(u64 *seen)
	{
		return vt_root_log_drain(&vcpu.counts->log, seen,
					 [](const vt_root_event *ev, void *ctx) {
						 static_cast<std::vector<vt_root_event> *>(ctx)->push_back(*ev);
					 },
					 &printed);
	}
};

TEST_F(RootLog, EventsComeOutInOrderOnceEach)
{
	vt_root_report(&vcpu, VT_RE_TRIPLE_FAULT, 1, 2, 3, 4);
	vt_root_report(&vcpu, VT_RE_INIT_IGNORED, 0, 0, 0, 0);
	u64 seen = 0;
	EXPECT_EQ(drain(&seen), 0u);
	ASSERT_EQ(printed.size(), 2u);
	EXPECT_EQ(printed[0].code, (u32)VT_RE_TRIPLE_FAULT);
	EXPECT_EQ(printed[0].arg[3], 4u);
	EXPECT_EQ(printed[1].code, (u32)VT_RE_INIT_IGNORED);
	EXPECT_EQ(drain(&seen), 0u);
	EXPECT_EQ(printed.size(), 2u) << "nothing new";
}

TEST_F(RootLog, ABurstKeepsTheNewestAndCountsTheRest)
{
	for (u64 i = 0; i < VT_ROOT_EVENTS + 5; i++)
		vt_root_report(&vcpu, VT_RE_TOO_MANY_PAGES, i, 0, 0, 0);
	u64 seen = 0;
	EXPECT_EQ(drain(&seen), 5u);
	ASSERT_EQ(printed.size(), (size_t)VT_ROOT_EVENTS);
	EXPECT_EQ(printed.front().arg[0], 5u);
	EXPECT_EQ(printed.back().arg[0], VT_ROOT_EVENTS + 4u);
}

TEST_F(RootLog, AKernelThatScribblesOnTheCountIsBoundedByTheMask)
{
	vcpu.counts->log.written = ~0ull - 3;	// the kernel may write its page
	vt_root_report(&vcpu, VT_RE_SPLIT_STEP_FAILED, 0x1000, 0, 0, 0);
	EXPECT_EQ(vcpu.counts->log.ev[(~0ull - 3) & (VT_ROOT_EVENTS - 1)].arg[0], 0x1000u)
		<< "written inside the page, at the masked slot";
}

TEST_F(RootLog, AnUnhandledEptViolationIsRecordedNotPrintedFromRoot)
{
	cpu().vmcs[GUEST_PHYSICAL_ADDRESS] = 0xfee00000;
	cpu().vmcs[GUEST_RIP] = 0xffffffff81000000ull;
	vt_guest_regs r{};
	EXPECT_FALSE(vm_exit(EXIT_REASON_EPT_VIOLATION, 0x181, r)) << "left VMX";
	u64 seen = 0;
	drain(&seen);
	ASSERT_EQ(printed.size(), 1u);
	EXPECT_EQ(printed[0].code, (u32)VT_RE_EPT_VIOLATION);
	EXPECT_EQ(printed[0].arg[0], 0xfee00000u);
	EXPECT_EQ(printed[0].arg[1], 0x181u);
}

}  // namespace
}  // namespace vtice::fake
