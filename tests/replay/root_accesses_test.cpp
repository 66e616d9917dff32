// A root recording's memory events, decoded (replay/root_accesses.hpp):
// steps of real instructions, written by hand as
// include/uapi/vtice/records.h lays them out, with what the hypervisor's
// 8-byte windows saw of each. The oracle is the SDM's operands (Vol. 2:
// MOVUPS stores 16 bytes, XSAVE the legacy area, header and enabled
// components, MOV DWORD 4, ADD a read then a write, LEA no access): each
// window byte must end up a read, a write, both or only seen, as the
// instruction used it, and bytes past the windows unknown after the store.
#include <gtest/gtest.h>

#include "replay_engine.hpp"
#include "root_accesses.hpp"
#include "root_records.hpp"
#include "root_steps.hpp"
#include "trace_file.hpp"

namespace vtice::replay {
namespace {

using namespace root_records;

struct Decoded {
	RootAccesses found;
	Recording recording;
};

Decoded decoded(const std::map<std::uint64_t, std::vector<std::uint8_t>> &pages)
{
	auto steps = steps_from_records(more_steps());
	EXPECT_TRUE(steps) << steps.error().message;
	EXPECT_EQ(steps->recording.steps.size(), 11u);
	RootAccesses found = decode_root_accesses(steps->recording, pages);
	return {found, std::move(steps->recording)};
}

TEST(RootAccesses, Counts)
{
	auto [found, recording] = decoded(text());
	EXPECT_EQ(found.undecoded, 0u);
	EXPECT_EQ(found.same_value_stores, 1u) << "mov [rbx+0x28], rcx";
	EXPECT_EQ(found.unseen_stores, 2u) << "the movups and the xsave64";
	EXPECT_EQ(found.unseen_bytes, 8u + 16384u) << "movups: the 8 past its window; xsave64: its whole area";
}

// MOVUPS stores its 16 bytes; what an XSAVE stores depends on XCR0, the
// mask in EDX:EAX and, for XSAVEOPT, XSAVEC and XSAVES, on which
// components are in use or modified (SDM Vol. 1 13.6-13.11): its area is
// only a store that may have happened.
TEST(RootAccesses, AnXsaveAreaIsAStoreThatMayNotHaveHappened)
{
	auto [found, recording] = decoded(text());
	std::vector<std::pair<std::uint32_t, bool>> unseen;
	for (const Step &step : recording.steps)
		for (const MemoryEvent &event : step.memory)
			if (event.kind == AccessKind::Unseen)
				unseen.emplace_back(event.unseen, event.maybe);
	std::vector<std::pair<std::uint32_t, bool>> want = {{8u, false}, {16384u, true}};
	EXPECT_EQ(unseen, want);
}

TEST(RootAccesses, BytesPastTheWindowsAreUnknownAfterAWideStore)
{
	Replay replay(decoded(text()).recording);
	replay.seek(4);
	EXPECT_EQ(word(replay.read(kData + 0x18, 8)), 0x1111u) << "as the load read it";
	replay.seek(5);
	EXPECT_EQ(word(replay.read(kData + 0x10, 8)), 0x2222u) << "the window's 8 bytes are known";
	EXPECT_TRUE(replay.read(kData + 0x18, 8).empty()) << "movups wrote them; the recording did not see what";
	EXPECT_EQ(replay.read(kData + 0x10, 16).size(), 8u) << "a short read up to the unknown bytes";
	EXPECT_TRUE(replay.step_writes(4, kData + 0x18, 1)) << "a write watchpoint there stops at the movups";
	EXPECT_EQ(replay.last_write(kData + 0x18, 8, 11), 4u);
	replay.seek(6);
	EXPECT_EQ(word(replay.read(kStack - 16, 8)), 0x100u) << "push: in its window, nothing unseen";
	replay.seek(7);
	EXPECT_TRUE(replay.read(kData + 0x40, 1).empty());
	EXPECT_TRUE(replay.read(kData + 0x40 + 16383, 1).empty());
	replay.seek(3);
	EXPECT_EQ(word(replay.read(kData + 0x18, 8)), 0x1111u) << "before the load: what it is about to read";
}

TEST(RootAccesses, WindowBytesAreWhatTheInstructionDidWithThem)
{
	Replay replay(decoded(text()).recording);
	// mov dword [rbx+0x20], 5: 4 bytes written, the window's other 4 only seen.
	EXPECT_TRUE(replay.step_writes(7, kData + 0x20, 4));
	EXPECT_FALSE(replay.step_writes(7, kData + 0x24, 4));
	EXPECT_NE(replay.last_write(kData + 0x24, 4, 11), std::optional<std::size_t>(7));
	replay.seek(8);
	EXPECT_EQ(word(replay.read(kData + 0x20, 8)), 0x9999999900000005ull) << "the seen half is still known";
	// mov [rbx+0x28], rcx of the value already there: a write all the same.
	EXPECT_TRUE(replay.step_writes(8, kData + 0x28, 8));
	EXPECT_FALSE(replay.step_reads(8, kData + 0x28, 8));
	EXPECT_EQ(replay.last_write(kData + 0x28, 8, 11), 8u);
	// lea: no access; the window only says what was there.
	EXPECT_FALSE(replay.step_reads(9, kData + 0x30, 8));
	EXPECT_FALSE(replay.step_writes(9, kData + 0x30, 8));
	replay.seek(9);
	EXPECT_EQ(word(replay.read(kData + 0x30, 8)), 0x77u);
	// add dword [rbx+0x38], 1: read and written; the window's upper half neither.
	EXPECT_TRUE(replay.step_reads(10, kData + 0x38, 4));
	EXPECT_TRUE(replay.step_writes(10, kData + 0x38, 4));
	EXPECT_FALSE(replay.step_reads(10, kData + 0x3c, 4));
	EXPECT_FALSE(replay.step_writes(10, kData + 0x3c, 4));
	// mov rsi, [rbx+0x18] reads all 8.
	EXPECT_TRUE(replay.step_reads(3, kData + 0x1f, 1));
}

// vmovq [rbx+0x40], xmm16 in EVEX (62 e1 fd 08 7e 43 08, GNU as): its
// disp8 is scaled by the element's 8 bytes (SDM Vol. 2A 2.7.5), which
// root's decoder does not work out, so root opened no window there and gave
// no record; its windows below RSP and at RDI saw nothing change. The 8
// bytes it stored must be unknown after it, not the value read before.
TEST(RootAccesses, AStoreNoWindowSawIsUnknownAfterIt)
{
	auto records = register_file();
	records.push_back(rec(VTICE_REC_STEP, 0, kRip, kRip + 4));	// mov rsi, [rbx+0x40]
	records.push_back(reg(6, 0x4444));
	records.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_READ, kData + 0x40, 0x4444));
	records.push_back(rec(VTICE_REC_STEP, 0, kRip + 4, kRip + 11));	// the EVEX store: nothing seen
	records.push_back(rec(VTICE_REC_STEP, 0, kRip + 11, kRip + 12));	// nop
	auto steps = steps_from_records(records);
	ASSERT_TRUE(steps) << steps.error().message;
	std::vector<std::uint8_t> page(4096, 0x90);
	const std::vector<std::uint8_t> code = {0x48, 0x8b, 0x73, 0x40, 0x62, 0xe1, 0xfd, 0x08, 0x7e, 0x43, 0x08};
	std::copy(code.begin(), code.end(), page.begin());
	RootAccesses found = decode_root_accesses(steps->recording, {{kRip, page}});
	EXPECT_EQ(found.unseen_stores, 1u);
	EXPECT_EQ(found.unseen_bytes, 8u);
	Replay replay(std::move(steps->recording));
	replay.seek(1);
	EXPECT_EQ(word(replay.read(kData + 0x40, 8)), 0x4444u) << "as the load read it";
	replay.seek(2);
	EXPECT_TRUE(replay.read(kData + 0x40, 1).empty()) << "the store wrote there; the recording did not see what";
	EXPECT_TRUE(replay.step_writes(1, kData + 0x47, 1)) << "a watchpoint there stops at the store";
	EXPECT_FALSE(replay.step_writes(1, kData + 0x48, 1));
}

TEST(RootAccesses, AStepWhoseCodeIsMissingIsKeptAsRootGaveIt)
{
	auto [found, recording] = decoded({});
	EXPECT_EQ(found.undecoded, 11u);
	EXPECT_EQ(found.unseen_stores, 0u);
	Replay replay(std::move(recording));
	EXPECT_TRUE(replay.step_writes(7, kData + 0x24, 4)) << "root's whole window";
}

TEST(RootAccesses, TheEventsSurviveTheFile)
{
	Recording recording = decoded(text()).recording;
	trace::TraceWriter writer(trace::TraceHeader{});
	add_recording(writer, recording);
	auto data = trace::read_trace(writer.finish());
	ASSERT_TRUE(data);
	auto loaded = load_recording(*data);
	ASSERT_TRUE(loaded) << loaded.error().message;
	const MemoryEvent &unseen = loaded->steps[4].memory.back();
	EXPECT_EQ(unseen.kind, AccessKind::Unseen);
	EXPECT_EQ(unseen.address, kData + 0x18);
	EXPECT_EQ(unseen.length(), 8u);
	EXPECT_TRUE(unseen.before.empty() && unseen.after.empty()) << "no bytes: none were seen";
	const MemoryEvent &seen = loaded->steps[7].memory.back();
	EXPECT_EQ(seen.kind, AccessKind::Seen);
	EXPECT_EQ(seen.address, kData + 0x24);
	EXPECT_EQ(word(seen.before), 0x99999999u);
	Replay replay(std::move(*loaded));
	replay.seek(5);
	EXPECT_TRUE(replay.read(kData + 0x18, 8).empty());
	replay.seek(8);
	EXPECT_EQ(word(replay.read(kData + 0x20, 8)), 0x9999999900000005ull);
}

}  // namespace
}  // namespace vtice::replay
