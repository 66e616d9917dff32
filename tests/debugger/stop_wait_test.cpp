// Signals and time limits in the engine (issue 22): the stop-wait policy on
// its own, and chains of automatic continues on a scripted target, which
// must end at Ctrl-C or at the command's time limit.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <thread>

#include "scripted_target.hpp"
#include "session.hpp"
#include "stop_wait.hpp"
#include "vtice/interrupts.hpp"

using namespace vtice;
using namespace vtice::dbg;
using fake::ScriptedTarget;

namespace {

class Interrupts : public ::testing::Test {
protected:
	void SetUp() override
	{
		interrupts::reset_for_tests();
		interrupts::begin_command(-1);
	}
	void TearDown() override { interrupts::reset_for_tests(); }
};

constexpr std::uint64_t kBreak = ScriptedTarget::kCode + 0x40;

// A Session whose target crosses kBreak `hits` times, with a breakpoint
// there whose condition is false: a chain of continues without end.
std::unique_ptr<Session> hot_session(int hits, ScriptedTarget **target_out)
{
	auto target = std::make_unique<ScriptedTarget>();
	for (int i = 0; i < hits; i++)
		target->script.push_back({.pc = kBreak});
	*target_out = target.get();
	auto session = std::make_unique<Session>(std::move(target));
	EXPECT_TRUE(session->attach().ok());
	BreakpointSpec spec;
	spec.location = "*0xffffffff81000040";
	spec.condition = "0";
	EXPECT_TRUE(session->add_breakpoint(spec).ok());
	return session;
}

}  // namespace

TEST_F(Interrupts, NothingAskedMeansWait)
{
	StopWait wait(-1);
	EXPECT_EQ(wait.next(), StopWait::Next::Wait);
	EXPECT_EQ(wait.next(), StopWait::Next::Wait);
}

TEST_F(Interrupts, CtrlCSendsOneBreakInAndASecondGivesUp)
{
	StopWait wait(-1);
	interrupts::raise_ctrl_c();
	EXPECT_EQ(wait.next(), StopWait::Next::BreakIn);
	EXPECT_EQ(wait.next(), StopWait::Next::Wait) << "one break-in, then the stop is awaited";
	interrupts::raise_ctrl_c();
	EXPECT_EQ(wait.next(), StopWait::Next::GiveUp);
	EXPECT_NE(wait.why().find("Ctrl-C again"), std::string::npos) << wait.why();
}

TEST_F(Interrupts, AnEndingSignalGivesUpADeafStubAfterTheGrace)
{
	interrupts::install();
	std::raise(SIGTERM);
	EXPECT_EQ(interrupts::end_signal(), SIGTERM);
	StopWait wait(-1);
	EXPECT_EQ(wait.next(), StopWait::Next::BreakIn);
	EXPECT_EQ(wait.next(), StopWait::Next::Wait);
	std::this_thread::sleep_for(std::chrono::milliseconds(StopWait::kBreakInGraceMs + 50));
	EXPECT_EQ(wait.next(), StopWait::Next::GiveUp);
	std::signal(SIGTERM, SIG_DFL);
}

TEST_F(Interrupts, TheTimeoutAndTheCommandLimitEndTheWait)
{
	StopWait own(0);
	EXPECT_EQ(own.next(), StopWait::Next::TimedOut);
	interrupts::begin_command(0);
	StopWait limited(-1);
	EXPECT_EQ(limited.next(), StopWait::Next::TimedOut);
	EXPECT_NE(limited.why().find("--timeout"), std::string::npos) << limited.why();
}

// A hot breakpoint whose condition is false: Ctrl-C ends the chain of
// continues at its next stop, reported as an interruption.
TEST_F(Interrupts, CtrlCEndsAChainOfContinues)
{
	ScriptedTarget *target = nullptr;
	auto session = hot_session(1000, &target);
	interrupts::raise_ctrl_c();
	auto stop = session->cont();
	ASSERT_TRUE(stop.ok()) << stop.error().message;
	EXPECT_EQ(stop->event.signal, 2);
	EXPECT_FALSE(stop->breakpoint.has_value());
	EXPECT_GT(target->script.size(), 900u) << "the chain ended instead of running the script out";
}

// The same chain under a time limit ends with an error, the target stopped.
TEST_F(Interrupts, TheTimeLimitEndsAChainOfContinues)
{
	ScriptedTarget *target = nullptr;
	auto session = hot_session(100000, &target);
	auto stop = session->cont(1);
	ASSERT_FALSE(stop.ok());
	EXPECT_NE(stop.error().message.find("time limit"), std::string::npos) << stop.error().message;
	EXPECT_EQ(session->state(), SessionState::Stopped);
	EXPECT_GT(target->script.size(), 0u);
}
