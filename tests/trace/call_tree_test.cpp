// tree_ layer: calls, returns, frames skipped by a return further up,
// interrupts, lost records, traces that begin mid-function, several CPUs.
#include <gtest/gtest.h>

#include <string>

#include "tree_events.hpp"

namespace vtice::trace {
namespace {

using namespace vtice::trace::test;

// Addresses: functions A=0x100, B=0x200, C=0x300; call sites are at +0x10
// (5-byte calls), so a call at 0x110 returns to 0x115.
TEST(CallTree, NestedCallsReturnAndTime)
{
	auto tree = build({
		flow_branch(10, 0x110, 0x200, BranchKind::Call, 4),  // in A (already running): call B
		flow_branch(20, 0x210, 0x300, BranchKind::Call, 2),  // B calls C
		flow_branch(35, 0x305, 0x215, BranchKind::Ret, 3),   // C returns to B
		flow_branch(50, 0x220, 0x115, BranchKind::Ret, 5),   // B returns to A
	});
	ASSERT_EQ(tree.roots.size(), 1u);
	auto top = children(tree, tree.roots[0]);
	ASSERT_EQ(top.size(), 1u);
	const CallNode &a = tree.nodes[top[0]];
	EXPECT_EQ(a.kind, NodeKind::Partial);
	EXPECT_EQ(a.entry, 0x110u);
	EXPECT_EQ(a.self_insns, 4u);
	EXPECT_EQ(a.end, NodeEnd::Open);
	auto in_a = children(tree, top[0]);
	ASSERT_EQ(in_a.size(), 1u);
	const CallNode &b = tree.nodes[in_a[0]];
	EXPECT_EQ(b.entry, 0x200u);
	EXPECT_EQ(b.start_tsc, 10u);
	EXPECT_EQ(b.end_tsc, 50u);
	EXPECT_EQ(b.end, NodeEnd::Returned);
	EXPECT_EQ(b.self_insns, 2u + 5u);
	const CallNode &c = tree.nodes[children(tree, in_a[0]).at(0)];
	EXPECT_EQ(c.entry, 0x300u);
	EXPECT_EQ(c.end_tsc - c.start_tsc, 15u);
	EXPECT_EQ(c.self_insns, 3u);
	EXPECT_EQ(tree.stats.branches, 4u);
	EXPECT_EQ(tree.stats.unwound_frames, 0u);
}

TEST(CallTree, ReturnFurtherUpUnwindsSkippedFrames)
{
	auto tree = build({
		flow_branch(10, 0x110, 0x200, BranchKind::Call),  // A -> B (returns to 0x115)
		flow_branch(20, 0x210, 0x300, BranchKind::Call),  // B -> C (returns to 0x215)
		flow_branch(30, 0x310, 0x400, BranchKind::Call),  // C -> D (returns to 0x315)
		flow_branch(40, 0x405, 0x115, BranchKind::Ret),   // D returns straight into A
		flow_branch(50, 0x120, 0x500, BranchKind::Call),  // A goes on: A -> E
	});
	auto a = children(tree, tree.roots[0]).at(0);
	auto in_a = children(tree, a);
	ASSERT_EQ(in_a.size(), 2u);  // B and E are both A's children
	EXPECT_EQ(tree.nodes[in_a[1]].entry, 0x500u);
	std::uint32_t b = in_a[0], c = children(tree, b).at(0), d = children(tree, c).at(0);
	EXPECT_EQ(tree.nodes[d].end, NodeEnd::Returned);  // D ran its ret
	EXPECT_EQ(tree.nodes[c].end, NodeEnd::Unwound);
	EXPECT_EQ(tree.nodes[b].end, NodeEnd::Unwound);
	EXPECT_EQ(tree.nodes[b].end_tsc, 40u);
	EXPECT_EQ(tree.stats.unwound_frames, 2u);
}

TEST(CallTree, TraceStartingMidFunctionGrowsUpward)
{
	auto tree = build({
		flow_branch(10, 0x310, 0x400, BranchKind::Call),  // in C: call D
		flow_branch(20, 0x405, 0x315, BranchKind::Ret),   // D returns
		flow_branch(30, 0x320, 0x215, BranchKind::Ret),   // C returns into B: above the root
		flow_branch(40, 0x220, 0x115, BranchKind::Ret),   // B returns into A
		flow_branch(50, 0x120, 0x600, BranchKind::Call),  // A calls F
	});
	auto top = children(tree, tree.roots[0]);
	ASSERT_EQ(top.size(), 1u);
	const CallNode &a = tree.nodes[top[0]];
	EXPECT_EQ(a.kind, NodeKind::Partial);
	EXPECT_EQ(a.entry, 0x115u);
	EXPECT_EQ(a.start_tsc, 10u);
	auto in_a = children(tree, top[0]);
	ASSERT_EQ(in_a.size(), 2u);  // B, then F
	const CallNode &b = tree.nodes[in_a[0]];
	EXPECT_EQ(b.entry, 0x215u);
	EXPECT_EQ(b.end, NodeEnd::Returned);
	EXPECT_EQ(b.end_tsc, 40u);
	EXPECT_EQ(tree.nodes[in_a[1]].entry, 0x600u);
	const CallNode &c = tree.nodes[children(tree, in_a[0]).at(0)];
	EXPECT_EQ(c.entry, 0x310u);
	EXPECT_EQ(c.end_tsc, 30u);
	EXPECT_EQ(tree.nodes[c.first_child].entry, 0x400u);
	EXPECT_EQ(tree.stats.returns_above_root, 2u);
	for (std::uint32_t child : in_a)
		EXPECT_EQ(tree.nodes[child].parent, top[0]);
}

TEST(CallTree, UnexpectedReturnPopsOneFrame)
{
	auto tree = build({
		flow_branch(10, 0x110, 0x200, BranchKind::Call),
		flow_branch(20, 0x210, 0x300, BranchKind::Call),
		flow_branch(30, 0x305, 0x9999, BranchKind::Ret),  // nobody expects 0x9999
		flow_branch(40, 0x220, 0x115, BranchKind::Ret),   // B still returns normally
	});
	EXPECT_EQ(tree.stats.unexpected_returns, 1u);
	auto a = children(tree, tree.roots[0]).at(0);
	auto b = children(tree, a).at(0);
	EXPECT_EQ(tree.nodes[b].end, NodeEnd::Returned);
	EXPECT_EQ(tree.nodes[b].end_tsc, 40u);
	EXPECT_EQ(tree.nodes[children(tree, b).at(0)].end, NodeEnd::Returned);
}

TEST(CallTree, InterruptNestsAndIretReturnsToTheInterruptedFrame)
{
	auto tree = build({
		flow_branch(10, 0x110, 0x200, BranchKind::Call),
		flow_async(20, 0x207, 0x800),                     // interrupt inside B
		flow_branch(30, 0x810, 0x900, BranchKind::Call),  // the handler calls 0x900
		flow_branch(40, 0x905, 0x815, BranchKind::Ret),
		flow_branch(50, 0x820, 0x207, BranchKind::Iret),  // back to the interrupted instruction
		flow_branch(60, 0x220, 0x115, BranchKind::Ret),   // B returns to A
	});
	auto a = children(tree, tree.roots[0]).at(0);
	auto b = children(tree, a).at(0);
	EXPECT_EQ(tree.nodes[b].end, NodeEnd::Returned);
	EXPECT_EQ(tree.nodes[b].end_tsc, 60u);
	auto irq = children(tree, b).at(0);
	EXPECT_EQ(tree.nodes[irq].kind, NodeKind::Interrupt);
	EXPECT_EQ(tree.nodes[irq].entry, 0x800u);
	EXPECT_EQ(tree.nodes[irq].return_address, 0x207u);
	EXPECT_EQ(tree.nodes[irq].end_tsc, 50u);
	EXPECT_EQ(children(tree, irq).size(), 1u);
	EXPECT_EQ(tree.stats.unwound_frames, 0u);
}

TEST(CallTree, LostRecordsLeaveAMarkerAndTheTreeIntact)
{
	auto tree = build({
		flow_branch(10, 0x110, 0x200, BranchKind::Call),
		flow_branch(20, 0x210, 0x300, BranchKind::Call),
		flow_lost(25, 40),
		// Whatever happened in the gap, C's caller's caller is returned to.
		flow_branch(30, 0x330, 0x115, BranchKind::Ret),
	});
	EXPECT_EQ(tree.stats.lost_records, 40u);
	auto a = children(tree, tree.roots[0]).at(0);
	auto b = children(tree, a).at(0);
	auto c = children(tree, b).at(0);
	auto marker = children(tree, c).at(0);
	EXPECT_EQ(tree.nodes[marker].kind, NodeKind::Lost);
	EXPECT_EQ(tree.nodes[marker].lost, 40u);
	EXPECT_EQ(tree.nodes[b].end, NodeEnd::Unwound);
	EXPECT_EQ(tree.nodes[c].end, NodeEnd::Returned);
}

TEST(CallTree, InterruptWithoutIretIsUnwoundLater)
{
	auto tree = build({
		flow_branch(10, 0x110, 0x200, BranchKind::Call),
		flow_async(20, 0x207, 0x800),
		flow_lost(30, 3),                               // the iret was among the lost
		flow_branch(40, 0x220, 0x115, BranchKind::Ret), // B's return: matches below the interrupt
	});
	auto a = children(tree, tree.roots[0]).at(0);
	auto b = children(tree, a).at(0);
	auto irq = children(tree, b).at(0);
	EXPECT_EQ(tree.nodes[irq].kind, NodeKind::Interrupt);
	EXPECT_EQ(tree.nodes[irq].end, NodeEnd::Unwound);  // a ret cannot end an interrupt frame
	EXPECT_EQ(tree.nodes[b].end, NodeEnd::Returned);
	EXPECT_EQ(tree.stats.unwound_frames, 1u);
}

TEST(CallTree, CpusGetSeparateTrees)
{
	auto tree = build({
		flow_branch(10, 0x110, 0x200, BranchKind::Call, 1, 2),
		flow_branch(11, 0x110, 0x200, BranchKind::Call, 1, 0),
		flow_branch(12, 0x205, 0x115, BranchKind::Ret, 1, 2),
	});
	ASSERT_EQ(tree.roots.size(), 2u);
	EXPECT_EQ(tree.nodes[tree.roots[0]].cpu, 0);
	EXPECT_EQ(tree.nodes[tree.roots[1]].cpu, 2);
	auto cpu0_b = children(tree, children(tree, tree.roots[0]).at(0)).at(0);
	auto cpu2_b = children(tree, children(tree, tree.roots[1]).at(0)).at(0);
	EXPECT_EQ(tree.nodes[cpu0_b].end, NodeEnd::Open);
	EXPECT_EQ(tree.nodes[cpu0_b].end_tsc, 11u);  // open frames end at their CPU's last record
	EXPECT_EQ(tree.nodes[cpu2_b].end, NodeEnd::Returned);
}

TEST(CallTree, UnclassifiedAndJumpsLeaveTheStackAlone)
{
	auto tree = build({
		flow_branch(10, 0x110, 0x200, BranchKind::Call),
		flow_branch(20, 0x210, 0x220, BranchKind::Jmp, 2),
		flow_branch(30, 0x230, 0x240, BranchKind::Jcc, 3),
		flow_branch(40, 0x250, 0x260, BranchKind::None, 4),  // not classified (no code)
	});
	EXPECT_EQ(tree.stats.unclassified, 1u);
	auto b = children(tree, children(tree, tree.roots[0]).at(0)).at(0);
	EXPECT_EQ(tree.nodes[b].self_insns, 9u);
	EXPECT_TRUE(tree.nodes[b].is_leaf());
}

TEST(CallTree, DeepNestingIsWalkedWithoutRecursion)
{
	CallTreeBuilder builder;
	const int depth = 200000;
	for (int i = 0; i < depth; i++)
		builder.add(flow_branch(i, 0x1000 + i * 16, 0x1000 + (i + 1) * 16, BranchKind::Call));
	auto tree = builder.finish();
	int deepest = 0, visits = 0;
	walk_tree(tree, tree.roots[0], [&](std::uint32_t, int d, bool) {
		deepest = std::max(deepest, d);
		visits++;
	});
	EXPECT_EQ(deepest, depth);  // the Partial frame at 0 plus one level per call
	EXPECT_EQ(visits, 2 * (depth + 1));
}

// Functions 0x100, 0x200, 0x300, 0x400, each 0x100 long.
Symbolizer functions()
{
	return [](std::uint64_t address) -> std::optional<SymbolHit> {
		if (address < 0x100 || address >= 0x500)
			return std::nullopt;
		std::uint64_t start = address & ~0xffull;
		return SymbolHit{"f" + std::to_string(start >> 8), start, address - start};
	};
}

TEST(CallTree, TailCallsNestAndReturnWithTheirParent)
{
	CallTreeBuilder builder(functions());
	for (const FlowEvent &event : {
		     flow_branch(10, 0x110, 0x200, BranchKind::Call),  // A calls B
		     flow_branch(20, 0x210, 0x240, BranchKind::Jmp),   // inside B: not a call
		     flow_branch(25, 0x250, 0x200, BranchKind::Jcc),   // back to B's entry: a loop
		     flow_branch(30, 0x260, 0x300, BranchKind::Jmp),   // B tail-calls C
		     flow_branch(40, 0x310, 0x400, BranchKind::Jcc),   // C tail-calls D (conditional)
		     flow_branch(50, 0x420, 0x115, BranchKind::Ret),   // D returns to A
		     flow_branch(60, 0x120, 0x130, BranchKind::Jmp),
	     })
		builder.add(event);
	auto tree = builder.finish();
	auto a = children(tree, tree.roots[0]).at(0);
	auto in_a = children(tree, a);
	ASSERT_EQ(in_a.size(), 1u);
	std::uint32_t b = in_a[0];
	ASSERT_EQ(children(tree, b).size(), 1u);
	std::uint32_t c = children(tree, b)[0];
	ASSERT_EQ(children(tree, c).size(), 1u);
	std::uint32_t d = children(tree, c)[0];
	EXPECT_EQ(tree.nodes[c].entry, 0x300u);
	EXPECT_TRUE(tree.nodes[c].tail_call);
	EXPECT_TRUE(tree.nodes[d].tail_call);
	EXPECT_FALSE(tree.nodes[b].tail_call);
	for (std::uint32_t node : {b, c, d}) {
		EXPECT_EQ(tree.nodes[node].end, NodeEnd::Returned);
		EXPECT_EQ(tree.nodes[node].end_tsc, 50u);
	}
	EXPECT_EQ(tree.nodes[a].end, NodeEnd::Open);
	EXPECT_EQ(tree.stats.unwound_frames, 0u);
	EXPECT_EQ(tree.stats.unexpected_returns, 0u);
}

TEST(CallTree, WithoutFunctionBoundsJumpsNeverCall)
{
	auto tree = build({
		flow_branch(10, 0x110, 0x200, BranchKind::Call),
		flow_branch(30, 0x260, 0x300, BranchKind::Jmp),
		flow_branch(50, 0x320, 0x115, BranchKind::Ret),
	});
	auto b = children(tree, children(tree, tree.roots[0]).at(0)).at(0);
	EXPECT_TRUE(tree.nodes[b].is_leaf());
	EXPECT_EQ(tree.nodes[b].end, NodeEnd::Returned);
}

// A kernel-only trace: the syscall instruction in user space has no code in
// the trace, yet the entry nests under the user frame and sysret leaves it.
TEST(CallTree, UserToKernelEntryWithoutUserCode)
{
	const std::uint64_t user = 0x7f0000001000ull, entry = 0xffffffff81a00000ull;
	FlowEvent syscall = flow_branch(10, user, entry, BranchKind::None);  // unclassified
	auto tree = build({
		syscall,
		flow_branch(20, entry + 0x10, entry + 0x1000, BranchKind::Call),
		flow_branch(30, entry + 0x1005, entry + 0x15, BranchKind::Ret),
		flow_branch(40, entry + 0x20, user + 2, BranchKind::Sysret),
		flow_branch(50, user + 0x10, user + 0x20, BranchKind::None),        // user jump, no code
	});
	auto top = children(tree, tree.roots[0]);
	ASSERT_EQ(top.size(), 1u);
	EXPECT_EQ(tree.nodes[top[0]].kind, NodeKind::Partial);
	EXPECT_EQ(tree.nodes[top[0]].entry, user);
	auto kernel = children(tree, top[0]);
	ASSERT_EQ(kernel.size(), 1u);
	EXPECT_EQ(tree.nodes[kernel[0]].entry, entry);
	EXPECT_EQ(tree.nodes[kernel[0]].end, NodeEnd::Returned);
	EXPECT_EQ(tree.nodes[kernel[0]].end_tsc, 40u);
	EXPECT_EQ(children(tree, kernel[0]).size(), 1u);
	EXPECT_EQ(tree.stats.unexpected_returns, 0u);
	EXPECT_EQ(tree.stats.unclassified, 1u);  // only the user-space jump
}

// f1..f4 as above, and the kernel's thunks: the retpoline array at 0x600
// (one 0x20-byte thunk per register, as in arch/x86/lib/retpoline.S) and
// the return thunk at 0x700.
Symbolizer functions_and_thunks()
{
	return [](std::uint64_t address) -> std::optional<SymbolHit> {
		if (address >= 0x600 && address < 0x6c0)
			return SymbolHit{"__x86_indirect_thunk_array", 0x600, address - 0x600};
		if (address >= 0x700 && address < 0x710)
			return SymbolHit{"__x86_return_thunk", 0x700, address - 0x700};
		return functions()(address);
	};
}

CallTree build_with(const Symbolizer &symbols, std::initializer_list<FlowEvent> events)
{
	CallTreeBuilder builder(symbols);
	for (const FlowEvent &event : events)
		builder.add(event);
	return builder.finish();
}

// An indirect call through a full retpoline: the thunk calls its own
// second half, which overwrites the return address with the target and
// returns into it. The node is the callee, entered at the thunk's call site.
TEST(CallTree, RetpolineCallShowsTheRealCallee)
{
	auto tree = build_with(functions_and_thunks(), {
		flow_branch(10, 0x110, 0x200, BranchKind::Call),  // f1 calls f2
		flow_branch(20, 0x220, 0x600, BranchKind::Call),  // f2: call __x86_indirect_thunk_rax
		flow_branch(21, 0x600, 0x60c, BranchKind::Call),  // the retpoline's inner call
		flow_branch(22, 0x610, 0x300, BranchKind::Ret),   // ret into the real target, f3
		flow_branch(30, 0x320, 0x225, BranchKind::Ret),   // f3 returns past the thunk's call site
		flow_branch(40, 0x230, 0x115, BranchKind::Ret),   // f2 returns to f1
	});
	auto f1 = children(tree, tree.roots[0]).at(0);
	auto in_f1 = children(tree, f1);
	ASSERT_EQ(in_f1.size(), 1u);
	auto in_f2 = children(tree, in_f1[0]);
	ASSERT_EQ(in_f2.size(), 1u) << "the thunk and its inner call are not nodes";
	const CallNode &f3 = tree.nodes[in_f2[0]];
	EXPECT_EQ(f3.entry, 0x300u);
	EXPECT_EQ(f3.kind, NodeKind::Call);
	EXPECT_FALSE(f3.tail_call);
	EXPECT_EQ(f3.end, NodeEnd::Returned);
	EXPECT_EQ(f3.end_tsc, 30u);
	EXPECT_EQ(tree.nodes[in_f1[0]].end, NodeEnd::Returned);
	EXPECT_EQ(tree.stats.unexpected_returns, 0u);
	EXPECT_EQ(tree.stats.unwound_frames, 0u);
}

// A jump to an indirect thunk is a tail call through it: the callee nests
// under the jumping function and returns for both.
TEST(CallTree, JumpThroughAThunkIsATailCallToTheRealCallee)
{
	auto tree = build_with(functions_and_thunks(), {
		flow_branch(10, 0x110, 0x200, BranchKind::Call),  // f1 calls f2
		flow_branch(20, 0x220, 0x620, BranchKind::Jmp),   // f2: jmp __x86_indirect_thunk_rcx
		flow_branch(21, 0x620, 0x400, BranchKind::Jmp),   // patched thunk: jmp *%rcx
		flow_branch(30, 0x420, 0x115, BranchKind::Ret),   // f4 returns to f1
	});
	auto f2 = children(tree, children(tree, tree.roots[0]).at(0)).at(0);
	auto in_f2 = children(tree, f2);
	ASSERT_EQ(in_f2.size(), 1u);
	EXPECT_EQ(tree.nodes[in_f2[0]].entry, 0x400u);
	EXPECT_TRUE(tree.nodes[in_f2[0]].tail_call);
	EXPECT_EQ(tree.nodes[in_f2[0]].end, NodeEnd::Returned);
	EXPECT_EQ(tree.nodes[f2].end, NodeEnd::Returned);
	EXPECT_EQ(tree.nodes[f2].end_tsc, 30u);
}

// `jmp __x86_return_thunk` is the function's ret, not a tail call.
TEST(CallTree, ReturnThunkIsTheFunctionsReturn)
{
	auto tree = build_with(functions_and_thunks(), {
		flow_branch(10, 0x110, 0x200, BranchKind::Call),  // f1 calls f2
		flow_branch(20, 0x220, 0x700, BranchKind::Jmp),   // f2: jmp __x86_return_thunk
		flow_branch(21, 0x700, 0x115, BranchKind::Ret),   // the thunk's ret
		flow_branch(30, 0x120, 0x300, BranchKind::Call),  // f1 calls f3 next
	});
	auto in_f1 = children(tree, children(tree, tree.roots[0]).at(0));
	ASSERT_EQ(in_f1.size(), 2u);
	EXPECT_TRUE(tree.nodes[in_f1[0]].is_leaf()) << "no node for the return thunk";
	EXPECT_EQ(tree.nodes[in_f1[0]].end, NodeEnd::Returned);
	EXPECT_EQ(tree.nodes[in_f1[0]].end_tsc, 21u);
	EXPECT_EQ(tree.nodes[in_f1[1]].entry, 0x300u);
	EXPECT_EQ(tree.stats.unexpected_returns, 0u);
}

// An interrupt taken inside a thunk runs its own code (and thunks) and
// irets back; the thunk still delivers its callee to the interrupted frame.
TEST(CallTree, InterruptInsideAThunkLeavesItsCalleeInPlace)
{
	auto tree = build_with(functions_and_thunks(), {
		flow_branch(10, 0x110, 0x200, BranchKind::Call),  // f1 calls f2
		flow_branch(20, 0x220, 0x600, BranchKind::Call),  // f2: call thunk
		flow_async(21, 0x600, 0x400),                     // interrupt to f4
		flow_branch(22, 0x410, 0x640, BranchKind::Call),  // the handler's own indirect call
		flow_branch(23, 0x640, 0x300, BranchKind::Jmp),   //   reaches f3
		flow_branch(24, 0x310, 0x415, BranchKind::Ret),
		flow_branch(25, 0x420, 0x600, BranchKind::Iret),  // back into the thunk
		flow_branch(26, 0x600, 0x300, BranchKind::Jmp),   // the thunk reaches f3
		flow_branch(30, 0x320, 0x225, BranchKind::Ret),
	});
	auto f2 = children(tree, children(tree, tree.roots[0]).at(0)).at(0);
	auto in_f2 = children(tree, f2);
	ASSERT_EQ(in_f2.size(), 2u);
	const CallNode &irq = tree.nodes[in_f2[0]];
	EXPECT_EQ(irq.kind, NodeKind::Interrupt);
	auto in_irq = children(tree, in_f2[0]);
	ASSERT_EQ(in_irq.size(), 1u);
	EXPECT_EQ(tree.nodes[in_irq[0]].entry, 0x300u);
	EXPECT_EQ(irq.end, NodeEnd::Returned);
	EXPECT_EQ(tree.nodes[in_f2[1]].entry, 0x300u);
	EXPECT_EQ(tree.nodes[in_f2[1]].end, NodeEnd::Returned);
	EXPECT_EQ(tree.stats.unexpected_returns, 0u);
}

TEST(CallTree, EmptyInputGivesAnEmptyTree)
{
	auto tree = build({});
	EXPECT_TRUE(tree.roots.empty());
	EXPECT_EQ(tree.stats.records, 0u);
}

}  // namespace
}  // namespace vtice::trace
