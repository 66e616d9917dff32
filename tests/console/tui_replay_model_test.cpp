// The TUI's backwards keys end to end below the terminal: SessionModel over
// a real dbg::Session and RspTarget, connected over TCP to a real
// serve-replay stub (replay/rsp_server.hpp) on a recording built here by
// hand, so every expected RIP follows from the steps as written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <future>
#include <thread>

#include "replay_engine.hpp"
#include "rsp/rsp_target.hpp"
#include "panes.hpp"
#include "rsp_server.hpp"
#include "session_model.hpp"

using namespace vtice;
using namespace vtice::tui;

namespace {

constexpr std::uint64_t kStart = 0xffffffff81000000ull;

std::vector<std::uint8_t> le64(std::uint64_t v)
{
	std::vector<std::uint8_t> out(8);
	std::memcpy(out.data(), &v, 8);
	return out;
}

// rip moves 3 bytes a step from kStart; rax counts the steps.
replay::Recording four_steps()
{
	replay::Recording r;
	r.registers = {{"rax", 64, "int64", "general"}, {"rip", 64, "code_ptr", "general"},
		       {"rsp", 64, "data_ptr", "general"}};
	for (std::uint64_t v : {std::uint64_t{0}, kStart, std::uint64_t{0xffffc90000010000ull}})
		for (std::uint8_t b : le64(v))
			r.initial.push_back(b);
	for (std::uint64_t i = 1; i <= 4; i++) {
		replay::Step step;
		step.registers.push_back({0, le64(i)});
		step.registers.push_back({1, le64(kStart + 3 * i)});
		r.steps.push_back(step);
	}
	return r;
}

// A call and its return: call at kStart (to kStart+0x10: nop; ret), then
// nop at kStart+5. Positions: 0 at the call, 1 and 2 in the callee, 3 back
// at kStart+5, 4 past the nop.
replay::Recording call_and_return()
{
	constexpr std::uint64_t kStack = 0xffffc90000010000ull;
	replay::Recording r;
	r.registers = {{"rax", 64, "int64", "general"}, {"rip", 64, "code_ptr", "general"},
		       {"rsp", 64, "data_ptr", "general"}};
	for (std::uint64_t v : {std::uint64_t{0}, kStart, kStack})
		for (std::uint8_t b : le64(v))
			r.initial.push_back(b);
	// Recordings hold whole pages of code; 64 bytes, int3 elsewhere, will do.
	std::vector<std::uint8_t> code(64, 0xcc);
	const std::uint8_t call[] = {0xe8, 0x0b, 0x00, 0x00, 0x00, 0x90};  // call kStart+0x10; nop
	std::copy(std::begin(call), std::end(call), code.begin());
	code[0x10] = 0x90;  // nop
	code[0x11] = 0xc3;  // ret
	r.code.push_back({kStart, code});
	auto step = [&r](std::uint64_t rip, std::optional<std::uint64_t> rsp) {
		replay::Step s;
		s.registers.push_back({1, le64(rip)});
		if (rsp)
			s.registers.push_back({2, le64(*rsp)});
		r.steps.push_back(s);
		return &r.steps.back();
	};
	step(kStart + 0x10, kStack - 8)->memory.push_back(
		{replay::AccessKind::WriteUnknownOld, kStack - 8, {}, le64(kStart + 5)});
	step(kStart + 0x11, std::nullopt);
	step(kStart + 5, kStack)->memory.push_back({replay::AccessKind::Read, kStack - 8, le64(kStart + 5), {}});
	step(kStart + 6, std::nullopt);
	return r;
}

class TuiReplayModel : public ::testing::Test {
protected:
	void SetUp() override { serve(four_steps()); }
	void serve(replay::Recording recording)
	{
		replay = std::make_unique<replay::Replay>(std::move(recording));
		std::promise<std::string> where;
		auto announced = where.get_future();
		replay::ServeOptions options;
		options.once = true;
		options.announce = [&where](const std::string &address) { where.set_value(address); };
		server = std::thread([this, options] { (void)replay::serve_replay(*replay, options); });
		auto target = dbg::rsp::RspTarget::connect(announced.get());
		ASSERT_TRUE(target.ok()) << target.error().to_string();
		session = std::make_unique<dbg::Session>(std::move(*target));
		auto stop = session->attach();
		ASSERT_TRUE(stop.ok()) << stop.error().to_string();
		model = std::make_unique<SessionModel>(*session, *stop);
	}
	void TearDown() override
	{
		model.reset();
		session.reset();  // the client leaves: a once server returns
		if (server.joinable())
			server.join();
	}

	std::unique_ptr<replay::Replay> replay;
	std::thread server;
	std::unique_ptr<dbg::Session> session;
	std::unique_ptr<SessionModel> model;
};

class TuiReplayCall : public TuiReplayModel {
protected:
	void SetUp() override { serve(call_and_return()); }
};

}  // namespace

TEST_F(TuiReplayModel, StepsBackAndRunsBackToTheRecordingsStart)
{
	EXPECT_TRUE(model->runs_backwards());
	ASSERT_TRUE(model->resume(Resume::StepInto).ok());
	ASSERT_TRUE(model->resume(Resume::StepInto).ok());
	ASSERT_TRUE(model->resume(Resume::StepInto).ok());
	EXPECT_EQ(model->pc(), kStart + 9);
	ASSERT_TRUE(model->resume(Resume::ReverseStepInto).ok());
	EXPECT_EQ(model->pc(), kStart + 6);
	EXPECT_EQ(replay->position(), 2u);
	ASSERT_TRUE(model->resume(Resume::ReverseContinue).ok());
	EXPECT_EQ(model->pc(), kStart);
	EXPECT_EQ(replay->position(), 0u);
	EXPECT_EQ(model->state(), RunState::Stopped);
}

TEST_F(TuiReplayModel, BackToTheCallNeedsTheFunctionsSymbol)
{
	ASSERT_TRUE(model->resume(Resume::StepInto).ok());
	auto back = model->resume(Resume::ReverseStepOut);
	ASSERT_FALSE(back.ok());
	EXPECT_NE(back.error().to_string().find("no symbol"), std::string::npos) << back.error().to_string();
	EXPECT_EQ(model->pc(), kStart + 3);  // it did not move
}

TEST_F(TuiReplayCall, BackOverACallLandsOnTheCallBackIntoItOnItsRet)
{
	for (int i = 0; i < 3; i++)
		ASSERT_TRUE(model->resume(Resume::StepInto).ok());
	ASSERT_EQ(model->pc(), kStart + 5);
	ASSERT_TRUE(model->resume(Resume::ReverseStepInto).ok());
	EXPECT_EQ(model->pc(), kStart + 0x11);  // the callee's ret
	EXPECT_EQ(replay->position(), 2u);
	ASSERT_TRUE(model->resume(Resume::StepInto).ok());
	ASSERT_TRUE(model->resume(Resume::ReverseStepOver).ok());
	EXPECT_EQ(model->pc(), kStart);  // the call, undone whole
	EXPECT_EQ(replay->position(), 0u);
	// Where the instruction before is no call, it is one step back.
	for (int i = 0; i < 4; i++)
		ASSERT_TRUE(model->resume(Resume::StepInto).ok());
	ASSERT_TRUE(model->resume(Resume::ReverseStepOver).ok());
	EXPECT_EQ(model->pc(), kStart + 5);
	EXPECT_EQ(replay->position(), 3u);
}

// The trace pane over the same replay: the recording's call tree (by hand
// here: the call at instruction 0 enters the callee at 1, its ret is
// instruction 2) and the position the stub says at each stop.
TEST_F(TuiReplayCall, TracePaneFollowsTheReplayInAndOutOfTheCallee)
{
	TraceTree tree;
	tree.instruction_clock = true;
	TraceNode callee;
	callee.name = "callee";
	callee.clock_start = 1;
	callee.clock_end = 3;
	tree.root.children.push_back(callee);
	TracePane pane(*model);
	pane.show_tree(&tree);
	EXPECT_EQ(model->replay_instruction(), 0u);
	EXPECT_EQ(pane.replay_call(), nullptr) << "at the call, in no call of the tree";
	const std::optional<std::uint64_t> in_callee[] = {1, 2};
	for (auto want : in_callee) {
		ASSERT_TRUE(model->resume(Resume::StepInto).ok());
		pane.on_stop();
		EXPECT_EQ(model->replay_instruction(), want);
		ASSERT_NE(pane.replay_call(), nullptr) << "instruction " << *want;
		EXPECT_EQ(pane.replay_call()->name, "callee");
	}
	ASSERT_TRUE(model->resume(Resume::StepInto).ok());
	pane.on_stop();
	EXPECT_EQ(model->replay_instruction(), 3u);
	EXPECT_EQ(pane.replay_call(), nullptr) << "returned";
	ASSERT_TRUE(model->resume(Resume::ReverseStepInto).ok());
	pane.on_stop();
	EXPECT_EQ(model->replay_instruction(), 2u);
	ASSERT_NE(pane.replay_call(), nullptr);
	EXPECT_EQ(pane.replay_call()->name, "callee");
}
