// SessionModel over a real dbg::Session and a fake Target: run control on the
// worker thread, Ctrl-C from the UI thread, the "running" guards, and the
// rows it hands the panes.
#include <gtest/gtest.h>

#include <thread>

#include "session_model.hpp"
#include "tui_fake_target.hpp"

using namespace vtice;
using namespace vtice::tui;
using vtice::tui::testing::FakeTarget;

namespace {

class SessionModelTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		auto owned = std::make_unique<FakeTarget>();
		target = owned.get();
		session = std::make_unique<dbg::Session>(std::move(owned));
		auto stop = session->attach();
		ASSERT_TRUE(stop.ok()) << stop.error().to_string();
		model = std::make_unique<SessionModel>(*session, *stop);
	}

	std::optional<StopEvent> wait_for_stop()
	{
		for (int i = 0; i < 100; ++i)
			if (auto event = model->poll(50))
				return event;
		return std::nullopt;
	}

	std::string register_value(const std::string &name)
	{
		for (const auto &row : model->registers())
			if (row.name == name)
				return row.value;
		return "";
	}

	FakeTarget *target = nullptr;
	std::unique_ptr<dbg::Session> session;
	std::unique_ptr<SessionModel> model;
	static constexpr std::uint64_t kStart = FakeTarget::kCode + 0x10;
};

}  // namespace

TEST_F(SessionModelTest, RegistersInTheGridOrderWithChangeFlags)
{
	auto rows = model->registers();
	ASSERT_EQ(rows.size(), 4u);
	EXPECT_EQ(rows[0].name, "rax");
	EXPECT_EQ(rows[1].name, "rsp");
	EXPECT_EQ(rows[2].name, "rip");
	EXPECT_EQ(rows[2].value, "ffffffff81000010");
	EXPECT_EQ(rows[3].value, "00000246");  // 32-bit eflags: 8 digits
	ASSERT_TRUE(model->resume(Resume::StepInto).ok());
	rows = model->registers();
	EXPECT_TRUE(rows[0].changed);   // rax
	EXPECT_FALSE(rows[1].changed);  // rsp
	EXPECT_TRUE(rows[2].changed);   // rip
	EXPECT_EQ(rows[2].value, "ffffffff81000011");
}

TEST_F(SessionModelTest, AStepFinishesBeforeResumeReturns)
{
	auto generation = model->stop_generation();
	ASSERT_TRUE(model->resume(Resume::StepInto).ok());
	EXPECT_EQ(model->state(), RunState::Stopped);
	EXPECT_EQ(model->stop_generation(), generation + 1);
	EXPECT_EQ(model->pc(), kStart + 1);
	EXPECT_NE(model->stop_reason().find("0xffffffff81000011"), std::string::npos) << model->stop_reason();
}

TEST_F(SessionModelTest, BackwardsOnATargetThatCannotIsRefusedWithTheWay)
{
	EXPECT_FALSE(model->runs_backwards());
	auto generation = model->stop_generation();
	for (Resume how : {Resume::ReverseContinue, Resume::ReverseStepInto, Resume::ReverseStepOut}) {
		auto back = model->resume(how);
		ASSERT_FALSE(back.ok());
		EXPECT_NE(back.error().to_string().find("serve-replay"), std::string::npos) << back.error().to_string();
	}
	EXPECT_EQ(model->state(), RunState::Stopped);
	EXPECT_EQ(model->stop_generation(), generation);
	EXPECT_EQ(model->pc(), kStart);
}

TEST_F(SessionModelTest, ContinueRunsOnTheWorkerAndCtrlCStopsIt)
{
	ASSERT_TRUE(model->resume(Resume::Continue).ok());
	EXPECT_EQ(model->state(), RunState::Running);
	EXPECT_FALSE(model->poll(20).has_value());
	// Everything but interrupt answers "running" while the worker owns the Session.
	EXPECT_TRUE(model->registers().empty());
	EXPECT_FALSE(model->read_memory(kStart, 4).ok());
	EXPECT_FALSE(model->toggle_breakpoint(kStart).ok());
	EXPECT_FALSE(model->resume(Resume::StepInto).ok());
	CommandOutput refused = model->execute("break 0x1");
	EXPECT_TRUE(refused.error);
	ASSERT_TRUE(model->interrupt().ok());
	auto event = wait_for_stop();
	ASSERT_TRUE(event.has_value());
	EXPECT_TRUE(event->moved);
	EXPECT_EQ(event->state, RunState::Stopped);
	EXPECT_NE(event->reason.find("Interrupted"), std::string::npos) << event->reason;
	EXPECT_EQ(model->pc(), kStart + 0x100);
	EXPECT_EQ(target->interrupts, 1);
}

TEST_F(SessionModelTest, ContinueStopsAtAToggledBreakpoint)
{
	ASSERT_TRUE(model->toggle_breakpoint(kStart + 0x40).ok());
	auto rows = model->breakpoints();
	ASSERT_EQ(rows.size(), 1u);
	EXPECT_EQ(rows[0].address, kStart + 0x40);
	EXPECT_EQ(rows[0].kind, "sw");
	ASSERT_TRUE(model->resume(Resume::Continue).ok());
	if (model->state() == RunState::Running) {
		ASSERT_TRUE(wait_for_stop().has_value());
	}
	EXPECT_EQ(model->pc(), kStart + 0x40);
	EXPECT_EQ(model->breakpoints()[0].hits, 1u);
	EXPECT_NE(model->stop_reason().find("Breakpoint 1"), std::string::npos) << model->stop_reason();
	ASSERT_TRUE(model->toggle_breakpoint(kStart + 0x40).ok());  // toggles it off
	EXPECT_TRUE(model->breakpoints().empty());
}

TEST_F(SessionModelTest, CommandsRunThroughTheTableAndReportStops)
{
	auto generation = model->stop_generation();
	CommandOutput out = model->execute("stepi");
	EXPECT_FALSE(out.error);
	EXPECT_EQ(model->stop_generation(), generation + 1);  // seen by the Session's listener
	EXPECT_EQ(model->pc(), kStart + 1);
	CommandOutput bad = model->execute("no-such-command");
	EXPECT_TRUE(bad.error);
	ASSERT_FALSE(bad.lines.empty());
	// A blocking command outlives the quick wait: its output comes with the stop.
	CommandOutput running = model->execute("continue");
	EXPECT_TRUE(running.lines.empty());
	EXPECT_EQ(model->state(), RunState::Running);
	ASSERT_TRUE(model->interrupt().ok());
	auto event = wait_for_stop();
	ASSERT_TRUE(event.has_value());
	EXPECT_TRUE(event->moved);
	EXPECT_FALSE(event->output.empty());
}

TEST_F(SessionModelTest, DisassemblyAboveRipNeedsASymbol)
{
	auto rows = model->disassemble(kStart, 3, 2);
	ASSERT_EQ(rows.size(), 2u);  // no symbol: no trustworthy rows above
	EXPECT_EQ(rows[0].address, kStart);
	EXPECT_TRUE(rows[0].current);
	EXPECT_EQ(rows[0].text, "nop");
	EXPECT_EQ(rows[0].bytes, "90");
	std::vector<dbg::SymbolList::Entry> entries{{FakeTarget::kCode, "fake_func", 'T'}};
	session->set_symbols(std::make_unique<dbg::SymbolList>(entries, "test"));
	SessionModel named(*session, dbg::StopInfo{{}, kStart, {}});
	rows = named.disassemble(kStart, 3, 2);
	ASSERT_EQ(rows.size(), 5u);
	EXPECT_EQ(rows[0].address, kStart - 3);
	EXPECT_EQ(rows[0].location, "fake_func+0xd");
	EXPECT_EQ(rows[3].address, kStart);
	EXPECT_TRUE(rows[3].current);
	EXPECT_EQ(rows[4].address, kStart + 1);
}

TEST_F(SessionModelTest, CommandNamesIncludeAliases)
{
	auto names = model->command_names();
	for (const char *want : {"break", "bp", "continue", "g", "stepi", "t", "info", "x"})
		EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}

TEST_F(SessionModelTest, DestroyingWhileRunningInterruptsAndJoins)
{
	ASSERT_TRUE(model->resume(Resume::Continue).ok());
	model.reset();  // must not hang on the blocked worker
	EXPECT_EQ(target->interrupts, 1);
	EXPECT_EQ(session->state(), dbg::SessionState::Stopped);
}
