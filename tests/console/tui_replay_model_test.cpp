// The TUI's backwards keys end to end below the terminal: SessionModel over
// a real dbg::Session and RspTarget, connected over TCP to a real
// serve-replay stub (replay/rsp_server.hpp) on a recording built here by
// hand, so every expected RIP follows from the steps as written.
#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <thread>

#include "replay_engine.hpp"
#include "rsp/rsp_target.hpp"
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

class TuiReplayModel : public ::testing::Test {
protected:
	void SetUp() override
	{
		std::promise<std::string> where;
		auto announced = where.get_future();
		replay::ServeOptions options;
		options.once = true;
		options.announce = [&where](const std::string &address) { where.set_value(address); };
		server = std::thread([this, options] { (void)replay::serve_replay(replay, options); });
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

	replay::Replay replay{four_steps()};
	std::thread server;
	std::unique_ptr<dbg::Session> session;
	std::unique_ptr<SessionModel> model;
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
	EXPECT_EQ(replay.position(), 2u);
	ASSERT_TRUE(model->resume(Resume::ReverseContinue).ok());
	EXPECT_EQ(model->pc(), kStart);
	EXPECT_EQ(replay.position(), 0u);
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
