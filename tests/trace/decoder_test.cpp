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
	EXPECT_EQ(blocks.count(0x1000, 0x1000)->insns, 1u);
	EXPECT_EQ(blocks.count(0x1005, 0x1006)->insns, 2u);
	EXPECT_EQ(blocks.count(0x1010, 0x1014)->insns, 3u);  // test, jz not taken, jmp
	EXPECT_EQ(blocks.count(0x1016, 0x1017)->insns, 2u);
}

// A tracer that steps with TF and DEBUGCTL.BTF takes one exit per taken
// branch where the code before it holds no instruction that reads or loads
// RFLAGS, else one per instruction until past it (hypervisor/debug/btf_block.h):
// 0x2000: pushfq (9c)   0x2001: pop rax (58)   0x2002: nop   0x2003: jmp 0x2006 (eb 01)
// 0x2005: nop   0x2006: mov ebx, eax (89 c3)   0x2008: je 0x2000 (74 f6)   0x200a: ret
TEST(BlockCounter, PricesABlockForABranchStepTracer)
{
	CodeMap code{std::vector<CodeBlob>{{0x2000, {0x9c, 0x58, 0x90, 0xeb, 0x01, 0x90, 0x89, 0xc3, 0x74, 0xf6, 0xc3}}}};
	Disassembler disassembler;
	BranchClassifier classifier{code, disassembler};
	BlockCounter blocks(classifier, true);
	auto clean = blocks.count(0x2006, 0x200a);	// mov, je not taken, ret
	ASSERT_TRUE(clean);
	EXPECT_EQ(clean->insns, 3u);
	EXPECT_EQ(clean->btf_steps, 1u) << "one branch step";
	auto taken = blocks.count(0x2006, 0x2008);	// the je taken: the scan still reaches the ret
	ASSERT_TRUE(taken);
	EXPECT_EQ(taken->btf_steps, 1u);
	auto hazard = blocks.count(0x2000, 0x2003);	// pushfq, pop, nop, jmp
	ASSERT_TRUE(hazard);
	EXPECT_EQ(hazard->insns, 4u);
	EXPECT_EQ(hazard->btf_steps, 2u) << "a plain step over the pushfq, then one to the jmp";
	EXPECT_EQ(hazard->btf_steps_interrupted, 3u) << "interrupted at the jmp: pushfq, pop and nop, the event";
}

TEST(BlockCounter, PricesOnlyWhenAsked)
{
	Fixture f;
	BlockCounter blocks(f.classifier);	// report, the TUI: counts only
	auto block = blocks.count(0x1010, 0x1014);
	ASSERT_TRUE(block);
	EXPECT_EQ(block->insns, 3u);
	EXPECT_EQ(block->btf_steps, 0u);
	FlowDecoder flow(f.classifier);
	flow.next(make_event(branch(0x1000, 0x1010), f.classifier));
	auto irq = flow.next(make_event(branch(0x1014, 0x5000, VTICE_BRANCH_ASYNC), f.classifier));
	EXPECT_EQ(irq.btf_exits, 0u) << "an interrupt is not priced either";
}

TEST(FlowDecoder, AnInterruptIsOneMoreStepForABranchStepTracer)
{
	Fixture f;
	FlowDecoder flow(f.classifier, {.price_branch_steps = true});
	flow.next(make_event(branch(0x1000, 0x1010), f.classifier));
	auto irq = flow.next(make_event(branch(0x1014, 0x5000, VTICE_BRANCH_ASYNC), f.classifier));
	ASSERT_TRUE(irq.insns_known);
	EXPECT_EQ(irq.insns, 2u) << "test, jz: the jmp did not run";
	EXPECT_EQ(irq.btf_exits, 2u) << "one branch step over test and jz, one into the handler";
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

TEST(CodeMap, ALongBlobIsFoundBehindShortOnesAndAMissIsEmpty)
{
	std::vector<CodeBlob> blobs{{0x1000, std::vector<std::uint8_t>(0x100, 5)}};
	for (std::uint64_t a = 0x1010; a < 0x1080; a += 0x10)
		blobs.push_back({a, {1, 2}});
	blobs.push_back({0x3000, {9}});
	CodeMap code(std::move(blobs));
	auto inside = code.read(0x1085, 4);  // past every short blob, inside the long one
	ASSERT_EQ(inside.size(), 4u);
	EXPECT_EQ(inside[0], 5);
	EXPECT_EQ(code.read(0x1011, 4)[0], 2);
	EXPECT_TRUE(code.read(0x1100, 1).empty());  // just past the long blob
	EXPECT_TRUE(code.read(0x2fff, 1).empty());
	EXPECT_EQ(code.read(0x3000, 4).size(), 1u);
}

}  // namespace
}  // namespace vtice::trace
