// A recording made in root (replay/root_steps.hpp): records written by
// hand as include/uapi/vtice/records.h lays them out for a three-step path
// (a store, a push, a load), then replayed. The oracle is that ABI and
// what the three instructions do (SDM Vol. 2): the replay must show the
// registers and memory each step left, and before it, what was there.
#include <gtest/gtest.h>

#include "replay_engine.hpp"
#include "root_steps.hpp"

namespace vtice::replay {
namespace {

constexpr std::uint64_t kRip = 0xffffffff81234000ull, kData = 0xffff888001000000ull;
constexpr std::uint64_t kStack = 0xffffc90000203f00ull;

vtice_record rec(std::uint16_t type, std::uint32_t flags, std::uint64_t a, std::uint64_t b)
{
	static std::uint64_t stamp = 1000;
	vtice_record r{};
	r.type = type;
	r.flags = flags;
	r.tsc = stamp++;
	r.u.raw[0] = a;
	r.u.raw[1] = b;
	return r;
}

vtice_record regs(std::uint32_t a, std::uint64_t va, std::uint32_t b, std::uint64_t vb)
{
	return rec(VTICE_REC_STEP_REGS, a | b << 8 | 2u << VTICE_STEP_REG_COUNT_SHIFT, va, vb);
}

vtice_record reg(std::uint32_t a, std::uint64_t va)
{
	return rec(VTICE_REC_STEP_REGS, a | 1u << VTICE_STEP_REG_COUNT_SHIFT, va, 0);
}

// Every register as the first step finds them: RAX 0x100 + n for n < 16 (RSP kStack, RBX kData).
std::vector<vtice_record> register_file()
{
	std::vector<vtice_record> out;
	auto value = [](std::uint32_t n) {
		return n == 4 ? kStack : n == 3 ? kData : n == VTICE_STEP_REG_RFLAGS ? 0x246 : 0x100 + n;
	};
	for (std::uint32_t n = 0; n + 1 < VTICE_STEP_REGS; n += 2)
		out.push_back(regs(n, value(n), n + 1, value(n + 1)));
	out.push_back(reg(VTICE_STEP_REGS - 1, value(VTICE_STEP_REGS - 1)));
	return out;
}

std::vector<vtice_record> three_steps()
{
	auto out = register_file();
	// mov [rbx+8], rax
	out.push_back(rec(VTICE_REC_STEP, 0, kRip, kRip + 4));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_BEFORE, kData + 8, 0xaaaabbbbccccddddull));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_AFTER, kData + 8, 0x100));
	out.push_back(rec(VTICE_REC_BRANCH, VTICE_BRANCH_FROM_STEP, 1, 2));	// passed over
	// push rcx
	out.push_back(rec(VTICE_REC_STEP, 0, kRip + 4, kRip + 5));
	out.push_back(reg(4, kStack - 8));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_BEFORE, kStack - 8, 0x5555));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_AFTER, kStack - 8, 0x101));
	// mov rdx, [rbx+8]
	out.push_back(rec(VTICE_REC_STEP, 0, kRip + 5, kRip + 9));
	out.push_back(reg(2, 0x100));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_READ, kData + 8, 0x100));
	return out;
}

std::uint64_t word(const std::vector<std::uint8_t> &bytes)
{
	std::uint64_t v = 0;
	for (std::size_t i = 0; i < bytes.size() && i < 8; i++)
		v |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
	return v;
}

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
