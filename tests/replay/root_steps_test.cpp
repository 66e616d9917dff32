// A recording made in root (replay/root_steps.hpp): records written by
// hand as include/uapi/vtice/records.h lays them out for a three-step path
// (a store, a push, a load: root_records.hpp), then replayed. The oracle is
// that ABI and what the three instructions do (SDM Vol. 2): the replay must
// show the registers and memory each step left, and before it, what was there.
#include <gtest/gtest.h>

#include "replay_engine.hpp"
#include "root_records.hpp"
#include "root_steps.hpp"

namespace vtice::replay {
namespace {

using namespace root_records;

TEST(RootSteps, ThreeStepsReplayWithTheRegistersAndMemoryEachLeft)
{
	auto records = three_steps();
	auto steps = steps_from_records(records);
	ASSERT_TRUE(steps) << steps.error().message;
	EXPECT_EQ(steps->cut, "");
	EXPECT_EQ(steps->writes, 2u);
	EXPECT_EQ(steps->reads, 1u);
	Replay replay(std::move(steps->recording));
	ASSERT_EQ(replay.steps(), 3u);

	replay.seek(0);
	EXPECT_EQ(replay.reg("rip"), kRip);
	EXPECT_EQ(replay.reg("rbx"), kData) << "VTICE_STEP_REG 3 is RBX (ModRM order)";
	EXPECT_EQ(replay.reg("rcx"), 0x101u);
	EXPECT_EQ(replay.reg("rsp"), kStack);
	EXPECT_EQ(replay.reg("eflags"), 0x246u);
	EXPECT_EQ(word(replay.read(kData + 8, 8)), 0xaaaabbbbccccddddull) << "before the store";

	replay.seek(1);
	EXPECT_EQ(replay.reg("rip"), kRip + 4);
	EXPECT_EQ(word(replay.read(kData + 8, 8)), 0x100u) << "the store's bytes";
	EXPECT_EQ(word(replay.read(kStack - 8, 8)), 0x5555u) << "the slot before the push";

	replay.seek(2);
	EXPECT_EQ(replay.reg("rsp"), kStack - 8);
	EXPECT_EQ(word(replay.read(kStack - 8, 8)), 0x101u) << "RCX pushed";

	replay.seek(3);
	EXPECT_EQ(replay.reg("rdx"), 0x100u);
	EXPECT_EQ(replay.reg("rip"), kRip + 9);
	EXPECT_EQ(replay.last_write(kData + 8, 8, 3), 0u) << "step 0 wrote them";

	replay.seek(0);
	EXPECT_EQ(replay.reg("rdx"), 0x102u) << "backwards, every change undone";
}

TEST(RootSteps, AnEventsFrameIsKnownAfterTheStepAndUnknownBefore)
{
	auto records = three_steps();
	const std::uint64_t handler = 0xffffffff81e00e00ull, frame = kStack - 8 - 48;
	records.push_back(rec(VTICE_REC_STEP, 0, kRip + 9, handler));
	records.push_back(reg(4, frame));
	for (std::uint64_t i = 0; i < 6; i++)
		records.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_FRAME, frame + 8 * i, 0x1000 + i));
	auto steps = steps_from_records(records);
	ASSERT_TRUE(steps);
	EXPECT_EQ(steps->frame_bytes, 48u);
	Replay replay(std::move(steps->recording));
	ASSERT_EQ(replay.steps(), 4u);
	replay.seek(4);
	EXPECT_EQ(word(replay.read(frame, 8)), 0x1000u) << "the interrupted RIP's slot, as delivered";
	EXPECT_EQ(word(replay.read(frame + 40, 8)), 0x1005u);
	replay.seek(3);
	EXPECT_TRUE(replay.read(frame, 8).empty()) << "before the delivery: never seen, unknown";
}

TEST(RootSteps, ALostRecordCutsTheRecordingThereAndSaysSo)
{
	auto records = three_steps();
	records.insert(records.begin() + 14, rec(VTICE_REC_LOST, 0, 7, 0));
	auto steps = steps_from_records(records);
	ASSERT_TRUE(steps);
	EXPECT_EQ(steps->recording.steps.size(), 1u);
	EXPECT_EQ(steps->cut, "records were lost after step 1");
}

TEST(RootSteps, RecordsWithoutStepsOrWithoutARegisterFileAreRefused)
{
	auto file = register_file();
	EXPECT_FALSE(steps_from_records(file));
	auto no_file = three_steps();
	no_file.erase(no_file.begin(), no_file.begin() + 10);
	auto steps = steps_from_records(no_file);
	ASSERT_FALSE(steps);
	EXPECT_NE(steps.error().message.find("register file"), std::string::npos);
}

TEST(RootSteps, MalformedGroupsCutTheRecordingWithTheReason)
{
	auto records = three_steps();
	records.erase(records.begin() + 11);	// the store's BEFORE
	auto steps = steps_from_records(records);
	ASSERT_TRUE(steps);
	EXPECT_EQ(steps->recording.steps.size(), 1u);
	EXPECT_NE(steps->cut.find("AFTER record without its BEFORE"), std::string::npos) << steps->cut;
	records = three_steps();
	records[12].flags = 99 | 3u << VTICE_STEP_REG_COUNT_SHIFT;
	EXPECT_NE(steps_from_records(records)->cut, "");
}

}  // namespace
}  // namespace vtice::replay
