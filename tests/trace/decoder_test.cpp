// ev_ and insn_ layers: branch classification from code, and instruction
// counts between branches, over hand-encoded x86-64 bytes.
#include <gtest/gtest.h>

#include "branch_events.hpp"
#include "code_source.hpp"
#include "instruction_flow.hpp"
#include "record_builders.hpp"

namespace vtice::trace {
namespace {

// 0x1000: call 0x1010 (e8 0b 00 00 00)   0x1005: nop   0x1006: ret
// 0x1010: test eax,eax (85 c0)   0x1012: jz 0x1016 (74 02)   0x1014: jmp 0x1017 (eb 01)
// 0x1016: nop   0x1017: ret
const std::vector<std::uint8_t> kCode = {
	0xe8, 0x0b, 0x00, 0x00, 0x00, 0x90, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0x85, 0xc0, 0x74, 0x02, 0xeb, 0x01, 0x90, 0xc3,
};

struct Fixture {
	CodeMap code{std::vector<CodeBlob>{{0x1000, kCode}}};
	Disassembler disassembler;
	BranchClassifier classifier{code, disassembler};
};

vtice_record branch(std::uint64_t from, std::uint64_t to, std::uint32_t flags = 0)
{
	return test::branch_record(0, 0, from, to, flags);
}

TEST(BranchClassifier, ClassifiesFromTheCode)
{
	Fixture f;
	EXPECT_EQ(f.classifier.classify(0x1000).kind, BranchKind::Call);
	EXPECT_EQ(f.classifier.classify(0x1000).length, 5);
	EXPECT_EQ(f.classifier.classify(0x1006).kind, BranchKind::Ret);
	EXPECT_EQ(f.classifier.classify(0x1012).kind, BranchKind::Jcc);
	EXPECT_EQ(f.classifier.classify(0x1014).kind, BranchKind::Jmp);
	EXPECT_TRUE(f.classifier.classify(0x1014).classified);
	EXPECT_FALSE(f.classifier.classify(0x5000).classified);  // no code there
	// Cached answers are the same answers.
	EXPECT_EQ(f.classifier.classify(0x1000).kind, BranchKind::Call);
}

TEST(BranchEvents, RecordTypesBecomeEvents)
{
	Fixture f;
	auto event = make_event(branch(0x1000, 0x1010), f.classifier);
	EXPECT_EQ(event.type, EventType::Branch);
	EXPECT_EQ(event.info.kind, BranchKind::Call);
	// Async entries are not classified: the instruction at `from` did not run.
	event = make_event(branch(0x1005, 0x1010, VTICE_BRANCH_ASYNC), f.classifier);
	EXPECT_TRUE(event.async());
	EXPECT_FALSE(event.info.classified);
	vtice_record lost{};
	lost.type = VTICE_REC_LOST;
	lost.u.lost.count = 7;
	event = make_event(lost, f.classifier);
	EXPECT_EQ(event.type, EventType::Lost);
	EXPECT_EQ(event.lost, 7u);
	vtice_record lbr{};
	lbr.type = VTICE_REC_LBR_SNAPSHOT;
	EXPECT_EQ(make_event(lbr, f.classifier).type, EventType::Resync);
	vtice_record other{};
	other.type = 200;  // unknown types are skipped, not fatal
	EXPECT_EQ(make_event(other, f.classifier).type, EventType::Other);
}

TEST(BlockCounter, CountsStraightLineCodeIncludingTheEnd)
{
	Fixture f;
	BlockCounter blocks(f.classifier);
	EXPECT_EQ(blocks.count(0x1000, 0x1000), 1u);
	EXPECT_EQ(blocks.count(0x1005, 0x1006), 2u);
	EXPECT_EQ(blocks.count(0x1010, 0x1014), 3u);  // test, jz not taken, jmp
	EXPECT_EQ(blocks.count(0x1016, 0x1017), 2u);
}

TEST(BlockCounter, RefusesBlocksThatCannotBeStraightLine)
{
	Fixture f;
	BlockCounter blocks(f.classifier);
	EXPECT_FALSE(blocks.count(0x1000, 0x1006));  // a call lies in between: records missing
	EXPECT_FALSE(blocks.count(0x1010, 0x1016));  // the jmp at 0x1014 would have been recorded
	EXPECT_FALSE(blocks.count(0x1010, 0x1011));  // not an instruction boundary
	EXPECT_FALSE(blocks.count(0x1006, 0x1005));  // backwards
	EXPECT_FALSE(blocks.count(0x4000, 0x4001));  // no code
}

TEST(FlowDecoder, CountsPerCpuAndForgetsAcrossLostRecords)
{
	Fixture f;
	FlowDecoder flow(f.classifier);
	auto first = flow.next(make_event(branch(0x1000, 0x1010), f.classifier));
	EXPECT_FALSE(first.insns_known);  // nothing before the first record
	auto jump = flow.next(make_event(branch(0x1014, 0x1017), f.classifier));
	ASSERT_TRUE(jump.insns_known);
	EXPECT_EQ(jump.insns, 3u);
	auto ret = flow.next(make_event(branch(0x1017, 0x1005), f.classifier));
	EXPECT_EQ(ret.insns, 1u);
	// Interrupted at 0x1006: the nop at 0x1005 ran, the ret did not.
	auto irq = flow.next(make_event(branch(0x1006, 0x1016, VTICE_BRANCH_ASYNC), f.classifier));
	ASSERT_TRUE(irq.insns_known);
	EXPECT_EQ(irq.insns, 1u);
	vtice_record lost{};
	lost.type = VTICE_REC_LOST;
	flow.next(make_event(lost, f.classifier));
	auto after = flow.next(make_event(branch(0x1017, 0x1006), f.classifier));
	EXPECT_FALSE(after.insns_known);
	// Another CPU keeps its own position.
	vtice_record other = branch(0x1000, 0x1010);
	other.cpu = 3;
	EXPECT_FALSE(flow.next(make_event(other, f.classifier)).insns_known);
}

TEST(CodeMap, ServesBytesWithinBlobs)
{
	CodeMap code(std::vector<CodeBlob>{{0x2000, {1, 2, 3, 4}}, {0x1000, {9, 8}}, {0x2002, {7, 7, 7, 7, 7}}});
	EXPECT_EQ(code.read(0x1001, 15).size(), 1u);
	EXPECT_EQ(code.read(0x1002, 15).size(), 0u);
	EXPECT_EQ(code.read(0x2000, 2).size(), 2u);
	auto overlap = code.read(0x2003, 15);  // the later blob wins where they overlap
	ASSERT_EQ(overlap.size(), 4u);
	EXPECT_EQ(overlap[0], 7);
	EXPECT_EQ(code.read(0xfff, 1).size(), 0u);
	EXPECT_TRUE(CodeMap().read(0, 1).empty());
}

}  // namespace
}  // namespace vtice::trace
