// The stub's hard-lockup watch (hypervisor/debug/lockup.c): a CPU is stuck
// when every poll for a whole threshold found interrupts off; one poll with
// them on, or a resume from a stop, starts the span over.
#include <gtest/gtest.h>

extern "C" {
#include "lockup.h"
}

namespace {

constexpr u64 kSecond = 1000;  // TSC ticks in these tests
constexpr u64 kPoll = 50;      // VT_STUB_POLL_MS apart

// Polls every kPoll from `from` up to and including `to` with interrupts
// as given; returns the time of the first poll that reported, or 0.
u64 poll_span(vt_lockup &l, vt_lockup_cpu &c, bool irqs_on, u64 from, u64 to)
{
	for (u64 t = from; t <= to; t += kPoll)
		if (vt_lockup_poll(&l, &c, irqs_on, t))
			return t;
	return 0;
}

TEST(LockupWatch, InterruptsOffForTheWholeThresholdIsReportedOnce)
{
	vt_lockup l{10 * kSecond, 0};
	vt_lockup_cpu c{};
	EXPECT_EQ(poll_span(l, c, false, 100, 100 + 10 * kSecond - kPoll), 0u);
	EXPECT_EQ(poll_span(l, c, false, 100 + 10 * kSecond, 100 + 10 * kSecond), 100 + 10 * kSecond);
	// Reported once: a CPU that stays stuck is not reported again...
	EXPECT_EQ(poll_span(l, c, false, 100 + 10 * kSecond + kPoll, 100 + 60 * kSecond), 0u);
	// ...until it comes back and gets stuck anew for a whole threshold.
	EXPECT_FALSE(vt_lockup_poll(&l, &c, true, 100 + 61 * kSecond));
	EXPECT_EQ(poll_span(l, c, false, 100 + 62 * kSecond, 100 + 72 * kSecond), 100 + 72 * kSecond);
}

TEST(LockupWatch, OnePollWithInterruptsOnStartsTheSpanOver)
{
	vt_lockup l{10 * kSecond, 0};
	vt_lockup_cpu c{};
	EXPECT_EQ(poll_span(l, c, false, 0, 9 * kSecond), 0u);
	EXPECT_FALSE(vt_lockup_poll(&l, &c, true, 9 * kSecond + kPoll));
	EXPECT_EQ(poll_span(l, c, false, 9 * kSecond + 2 * kPoll, 18 * kSecond), 0u);
}

TEST(LockupWatch, TimeStoppedInTheStubDoesNotCount)
{
	vt_lockup l{10 * kSecond, 0};
	vt_lockup_cpu c{};
	EXPECT_EQ(poll_span(l, c, false, 0, 5 * kSecond), 0u);
	l.resumed = 60 * kSecond;  // stopped for 55 s, then resumed
	EXPECT_FALSE(vt_lockup_poll(&l, &c, false, 60 * kSecond + kPoll));
	EXPECT_EQ(poll_span(l, c, false, 60 * kSecond + 2 * kPoll, 69 * kSecond), 0u);
	EXPECT_NE(poll_span(l, c, false, 69 * kSecond + kPoll, 71 * kSecond), 0u);
}

TEST(LockupWatch, ThresholdZeroIsOff)
{
	vt_lockup l{0, 0};
	vt_lockup_cpu c{};
	EXPECT_EQ(poll_span(l, c, false, 0, 100 * kSecond), 0u);
}

}  // namespace
