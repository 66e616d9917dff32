// Renderers over small hand-built trees; expected text written by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "assemble.hpp"
#include "render.hpp"
#include "symbol_table.hpp"
#include "tree_events.hpp"

namespace vtice::trace {
namespace {

using namespace vtice::trace::test;

SymbolTable names()
{
	return SymbolTable({{0x100, 0x100, "alpha"}, {0x200, 0x100, "beta"}, {0x300, 0x100, "gamma"},
			    {0x800, 0x100, "irq_entry"}, {0x900, 0x100, "say \"hi\"\\now"}});
}

// alpha (already running) calls beta, which takes an interrupt, loses some
// records and calls gamma, which never returns.
CallTree sample_tree()
{
	return build({
		flow_branch(1000, 0x110, 0x200, BranchKind::Call, 3),
		flow_async(1500, 0x207, 0x800),
		flow_branch(2000, 0x810, 0x207, BranchKind::Iret, 4),
		flow_lost(2100, 9),
		flow_branch(2500, 0x220, 0x300, BranchKind::Call, 2),
		flow_branch(4000, 0x330, 0x340, BranchKind::Jmp, 7),
	});
}

TEST(RenderGraph, FtraceLayout)
{
	SymbolTable table = names();
	std::string graph = render_graph(sample_tree(), {1000000, table.symbolizer()});
	EXPECT_EQ(graph,
		  "# CPU  DURATION      FUNCTION CALLS\n"
		  "# |     |   |         |   |   |   |\n"
		  "  0)               |  alpha() { /* already running */\n"
		  "  0)               |    beta() {\n"
		  "  0)               |      ==========> interrupted at beta+0x7\n"
		  "  0)      0.500 us |      irq_entry();\n"
		  "  0)               |      <==========\n"
		  "  0)               |      /* lost 9 records */\n"
		  "  0)               |      gamma(); /* still running */\n"
		  "  0)               |    } /* beta, still running */\n"
		  "  0)               |  } /* alpha, still running */\n"
		  "# branches: 5, lost records: 9, unclassified: 0, unwound frames: 0\n");
}

// A loss of unknown size (an LBR stack that went round, records.h) is not
// shown as "0 records".
TEST(RenderGraph, ALossOfUnknownSizeSaysSo)
{
	auto tree = build({
		flow_branch(10, 0x110, 0x200, BranchKind::Call),
		flow_lost(20, 0),
		flow_branch(30, 0x210, 0x300, BranchKind::Call),
	});
	std::string graph = render_graph(tree, {0, {}});
	EXPECT_NE(graph.find("/* lost records here (how many is unknown) */"), std::string::npos) << graph;
	EXPECT_EQ(graph.find("lost 0 records"), std::string::npos) << graph;
}

TEST(RenderGraph, UnknownFrequencyShowsTicksAndUnknownNamesShowAddresses)
{
	auto tree = build({
		flow_branch(10, 0x5010, 0x6000, BranchKind::Call),
		flow_branch(52, 0x6005, 0x5015, BranchKind::Ret),
	});
	std::string graph = render_graph(tree, {0, {}});
	EXPECT_NE(graph.find("  0)         42 cy |    0x6000();\n"), std::string::npos) << graph;
	EXPECT_NE(graph.find("  0)               |  0x5010() { /* already running */\n"), std::string::npos) << graph;
}

// A trace made by stepping counts instructions, not cycles: the unit says so.
TEST(RenderGraph, InstructionClockIsLabelledInsn)
{
	auto tree = build({
		flow_branch(10, 0x5010, 0x6000, BranchKind::Call),
		flow_branch(52, 0x6005, 0x5015, BranchKind::Ret),
	});
	std::string graph = render_graph(tree, {0, {}, TraceClock::Instructions});
	EXPECT_NE(graph.find("  0)       42 insn |    0x6000();\n"), std::string::npos) << graph;
	EXPECT_EQ(graph.find(" cy "), std::string::npos) << graph;
	// The column stays where ftrace has it, so the two line up.
	EXPECT_EQ(graph.find("|    0x6000"), graph.find("  0)       42 insn |") + 19);
}

TEST(RenderGraph, UnwoundFramesAreMarked)
{
	SymbolTable table = names();
	auto tree = build({
		flow_branch(0, 0x110, 0x200, BranchKind::Call),
		flow_branch(1000, 0x210, 0x300, BranchKind::Call),
		flow_branch(3000, 0x310, 0x115, BranchKind::Ret),
	});
	std::string graph = render_graph(tree, {1000000, table.symbolizer()});
	EXPECT_NE(graph.find("  0)      2.000 us |      gamma();\n"), std::string::npos) << graph;
	EXPECT_NE(graph.find("  0)      3.000 us |    } /* beta, unwound */\n"), std::string::npos) << graph;
}

TEST(RenderFolded, WeightsAreSelfInstructionsMerged)
{
	SymbolTable table = names();
	auto tree = build({
		flow_branch(0, 0x110, 0x200, BranchKind::Call, 3),
		flow_branch(1, 0x210, 0x300, BranchKind::Call, 4),
		flow_branch(2, 0x310, 0x215, BranchKind::Ret, 5),
		flow_branch(3, 0x220, 0x300, BranchKind::Call, 6),
		flow_branch(4, 0x310, 0x225, BranchKind::Ret, 7),
		flow_branch(5, 0x230, 0x115, BranchKind::Ret, 0),  // beta's ret block: 0 instructions
	});
	EXPECT_EQ(render_folded(tree, {0, table.symbolizer()}),
		  "alpha 3\n"
		  "alpha;beta 10\n"
		  "alpha;beta;gamma 12\n");
}

// Names come from files and guest memory: a hostile one must not forge a
// line, a terminal escape, a FlameGraph frame or weight.
TEST(RenderFolded, HostileNamesCannotForgeLinesFramesOrWeights)
{
	SymbolTable table({{0x100, 0x100, "alpha"}, {0x200, 0x100, "evil\nroot;fake 999\x1b[2J"}});
	auto tree = build({flow_branch(0, 0x110, 0x200, BranchKind::Call, 3),
			   flow_branch(1, 0x210, 0x115, BranchKind::Ret, 5)});
	std::string folded = render_folded(tree, {0, table.symbolizer()});
	EXPECT_EQ(folded, "alpha 3\n"
			  "alpha;evil\\x0aroot\\x3bfake\\x20999\\x1b[2J 5\n");
	std::string graph = render_graph(tree, {0, table.symbolizer()});
	EXPECT_EQ(graph.find('\x1b'), std::string::npos) << "no raw escape byte";
	EXPECT_NE(graph.find("evil\\x0aroot;fake 999\\x1b[2J"), std::string::npos) << graph;
}

// Found by fuzz_renderers: the frame that stands for a cut stack was named
// "[deeper frames]", and FlameGraph reads a line's last space as the start of
// its weight. A 300-deep recursion must fold into lines of at most 127 frames,
// each "stack weight" with exactly one space.
TEST(RenderFolded, ACutStackIsStillOneFramePerSemicolon)
{
	SymbolTable table = names();
	CallTreeBuilder recursion;
	for (int i = 0; i < 300; i++)
		recursion.add(flow_branch(i, 0x110, 0x100, BranchKind::Call, 2));
	std::string folded = render_folded(recursion.finish(), {0, table.symbolizer()});
	std::size_t lines = 0;
	std::size_t start = 0;
	for (std::size_t end; (end = folded.find('\n', start)) != std::string::npos; start = end + 1) {
		std::string line = folded.substr(start, end - start);
		lines++;
		ASSERT_EQ(std::count(line.begin(), line.end(), ' '), 1) << line;
		std::string stack = line.substr(0, line.find(' '));
		EXPECT_LE(std::count(stack.begin(), stack.end(), ';') + 1, 127) << line;
	}
	EXPECT_EQ(start, folded.size()) << "the last line ends with a newline";
	// 126 alpha lines, then the cut frame carrying the 174 deeper calls (2 each).
	EXPECT_EQ(lines, 127u);
	EXPECT_NE(folded.find(";[deeper_frames] 348\n"), std::string::npos) << folded.substr(folded.size() - 80);
}

std::string python_check(const std::string &json, const std::string &script)
{
	// ctest runs each test as its own process, in parallel: one file per test.
	std::string path = testing::TempDir() + "/perfetto-" +
			   testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
	std::ofstream(path) << json;
	std::string out = vtice::test::run_command("python3 -c '" + script + "' " + path);
	std::remove(path.c_str());
	return out;
}

// Found by fuzz_renderers: a damaged SYMBOLS chunk may name a function "",
// which made an empty FlameGraph frame (" 5", a line without a stack).
TEST(RenderFolded, NamelessSymbolsShowTheirAddress)
{
	SymbolTable table({{0x100, 0x100, "alpha"}, {0x200, 0x100, ""}});
	auto tree = build({flow_branch(0, 0x110, 0x200, BranchKind::Call, 3),
			   flow_branch(1, 0x210, 0x115, BranchKind::Ret, 5)});
	EXPECT_EQ(render_folded(tree, {0, table.symbolizer()}), "alpha 3\nalpha;0x200 5\n");
	EXPECT_NE(render_graph(tree, {0, table.symbolizer()}).find("|    0x200();"), std::string::npos);
}

TEST(RenderPerfetto, IsValidTraceEventJson)
{
	SymbolTable table = names();
	std::string json = render_perfetto(sample_tree(), {1000000, table.symbolizer()});
	// Python's json module is the independent parser; it lists what it found.
	std::string listing = python_check(json,
		"import json,sys\n"
		"d=json.load(open(sys.argv[1]))\n"
		"for e in d[\"traceEvents\"]:\n"
		"  print(e[\"ph\"], e[\"name\"], e.get(\"tid\"), e.get(\"ts\"), e.get(\"dur\"))\n");
	EXPECT_EQ(listing,
		  "M process_name None None None\n"
		  "M thread_name 0 None None\n"
		  "X alpha 0 0.0 3.0\n"
		  "X beta 0 0.0 3.0\n"
		  "X irq_entry 0 0.5 0.5\n"
		  "i lost records 0 1.1 None\n"
		  "X gamma 0 1.5 1.5\n");
}

TEST(RenderPerfetto, EscapesNames)
{
	SymbolTable table = names();
	auto tree = build({flow_branch(0, 0x110, 0x900, BranchKind::Call)});
	std::string json = render_perfetto(tree, {1000, table.symbolizer()});
	std::string listing = python_check(json,
		"import json,sys\n"
		"d=json.load(open(sys.argv[1]))\n"
		"print(repr(d[\"traceEvents\"][-1][\"name\"]))\n");
	EXPECT_EQ(listing, "'say \"hi\"\\\\now'\n");
}

TEST(SymbolTable, LooksUpBySizeOrNextSymbol)
{
	SymbolTable table({{0x300, 0, "open_ended"}, {0x100, 0x10, "sized"}, {0x200, 0, "until_next"}});
	EXPECT_EQ(table.lookup(0x10f)->name, "sized");
	EXPECT_FALSE(table.lookup(0x110));
	EXPECT_EQ(table.lookup(0x2ff)->name, "until_next");
	EXPECT_EQ(table.lookup(0x2ff)->offset, 0xffu);
	EXPECT_EQ(table.lookup(0x300)->name, "open_ended");
	EXPECT_FALSE(table.lookup(0x50));
	EXPECT_TRUE(SymbolTable().empty());
}

}  // namespace
}  // namespace vtice::trace
