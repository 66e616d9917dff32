// Unseen stores (replay/unseen_stores.hpp): a root recording's steps of
// real instructions, written by hand as include/uapi/vtice/records.h lays
// them out, with what the hypervisor's 8-byte windows saw of each. The
// oracle is the SDM's operand sizes (Vol. 2: MOVUPS stores 16 bytes,
// CMPXCHG16B 16, XSAVE the legacy area, header and enabled components):
// bytes past the windows must be unknown after the store, never the value
// the replay saw there before it.
#include <gtest/gtest.h>

#include "replay_engine.hpp"
#include "root_records.hpp"
#include "root_steps.hpp"
#include "trace_file.hpp"
#include "unseen_stores.hpp"

namespace vtice::replay {
namespace {

using namespace root_records;

// After root_records' three steps (kCode, 9 bytes; the nop at +9 unused):
//   +9   mov rsi, [rbx+0x18]      reads 0x1111 there
//   +13  movups [rbx+0x10], xmm0  16 bytes; the window saw the first 8 change
//   +17  push rax                 8 bytes below RSP: all in a window
//   +18  xsave64 [rbx+0x40]       the window at rbx+0x40 unchanged (no records)
const std::vector<std::uint8_t> kMoreCode = {0x48, 0x8b, 0x73, 0x18, 0x0f, 0x11, 0x43, 0x10,
					     0x50, 0x48, 0x0f, 0xae, 0x63, 0x40};

std::vector<vtice_record> wide_store_steps()
{
	auto out = three_steps();
	out.push_back(rec(VTICE_REC_STEP, 0, kRip + 9, kRip + 13));
	out.push_back(reg(6, 0x1111));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_READ, kData + 0x18, 0x1111));
	out.push_back(rec(VTICE_REC_STEP, 0, kRip + 13, kRip + 17));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_BEFORE, kData + 0x10, 0));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_AFTER, kData + 0x10, 0x2222));
	out.push_back(rec(VTICE_REC_STEP, 0, kRip + 17, kRip + 18));
	out.push_back(reg(4, kStack - 16));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_BEFORE, kStack - 16, 0));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_AFTER, kStack - 16, 0x100));
	out.push_back(rec(VTICE_REC_STEP, 0, kRip + 18, kRip + 23));
	return out;
}

std::map<std::uint64_t, std::vector<std::uint8_t>> text()
{
	std::vector<std::uint8_t> page(4096, 0xcc);
	std::copy(kCode.begin(), kCode.begin() + 9, page.begin());
	std::copy(kMoreCode.begin(), kMoreCode.end(), page.begin() + 9);
	return {{kRip, page}};
}

std::uint64_t word(const std::vector<std::uint8_t> &bytes)
{
	std::uint64_t v = 0;
	for (std::size_t i = 0; i < bytes.size() && i < 8; i++)
		v |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
	return v;
}

TEST(UnseenStores, BytesPastTheWindowsAreUnknownAfterTheStore)
{
	auto steps = steps_from_records(wide_store_steps());
	ASSERT_TRUE(steps) << steps.error().message;
	ASSERT_EQ(steps->recording.steps.size(), 7u);
	UnseenStores unseen = mark_unseen_stores(steps->recording, text());
	EXPECT_EQ(unseen.undecoded, 0u);
	EXPECT_EQ(unseen.stores, 2u) << "the movups and the xsave64; not mov, push or the loads";
	EXPECT_EQ(unseen.bytes, 8u + 16384u) << "movups: the 8 past its window; xsave64: its whole area, none seen";

	Replay replay(std::move(steps->recording));
	replay.seek(4);
	EXPECT_EQ(word(replay.read(kData + 0x18, 8)), 0x1111u) << "as the load read it";
	replay.seek(5);
	EXPECT_EQ(word(replay.read(kData + 0x10, 8)), 0x2222u) << "the window's 8 bytes are known";
	EXPECT_TRUE(replay.read(kData + 0x18, 8).empty()) << "movups wrote them; the recording did not see what";
	EXPECT_EQ(replay.read(kData + 0x10, 16).size(), 8u) << "a short read up to the unknown bytes";
	EXPECT_TRUE(replay.step_writes(4, kData + 0x18, 1)) << "a write watchpoint there stops at the movups";
	EXPECT_EQ(replay.last_write(kData + 0x18, 8, 7), 4u);
	replay.seek(6);
	EXPECT_EQ(word(replay.read(kStack - 16, 8)), 0x100u) << "push: in its window, nothing unseen";
	replay.seek(7);
	EXPECT_TRUE(replay.read(kData + 0x40, 1).empty());
	EXPECT_TRUE(replay.read(kData + 0x40 + 16383, 1).empty());
	replay.seek(3);
	EXPECT_EQ(word(replay.read(kData + 0x18, 8)), 0x1111u) << "before the load: what it is about to read";
}

TEST(UnseenStores, AStepWhoseCodeIsMissingIsCountedNotGuessed)
{
	auto steps = steps_from_records(wide_store_steps());
	ASSERT_TRUE(steps);
	UnseenStores unseen = mark_unseen_stores(steps->recording, {});
	EXPECT_EQ(unseen.undecoded, 7u);
	EXPECT_EQ(unseen.stores, 0u);
}

TEST(UnseenStores, SurviveTheFile)
{
	auto steps = steps_from_records(wide_store_steps());
	ASSERT_TRUE(steps);
	mark_unseen_stores(steps->recording, text());
	trace::TraceWriter writer(trace::TraceHeader{});
	add_recording(writer, steps->recording);
	auto data = trace::read_trace(writer.finish());
	ASSERT_TRUE(data);
	auto loaded = load_recording(*data);
	ASSERT_TRUE(loaded) << loaded.error().message;
	const MemoryEvent &event = loaded->steps[4].memory.back();
	EXPECT_EQ(event.kind, AccessKind::Unseen);
	EXPECT_EQ(event.address, kData + 0x18);
	EXPECT_EQ(event.length(), 8u);
	EXPECT_TRUE(event.before.empty() && event.after.empty()) << "no bytes: none were seen";
	Replay replay(std::move(*loaded));
	replay.seek(5);
	EXPECT_TRUE(replay.read(kData + 0x18, 8).empty());
}

}  // namespace
}  // namespace vtice::replay
