// btf-trace call trees in the trace pane: the bundled demo trace, whose call
// structure and durations are written by hand in tests/fixtures/calls
// (snippet.S, expected.graph), and a pathological nesting depth.
#include <gtest/gtest.h>

#include <algorithm>

#include "app.hpp"
#include "trace_file.hpp"
#include "trace_load.hpp"
#include "tui_fake_model.hpp"
#include "tui_fake_terminal.hpp"

using namespace vtice;
using namespace vtice::tui;

namespace {

const std::string kDemo = std::string(VTICE_TEST_DATA) + "/fixtures/demo.vtrace";

const TraceNode &child(const TraceNode &node, std::size_t i)
{
	EXPECT_LT(i, node.children.size()) << node.name;
	return node.children.at(i);
}

std::vector<std::string> child_names(const TraceNode &node)
{
	std::vector<std::string> names;
	for (const auto &c : node.children)
		names.push_back(c.name);
	return names;
}

}  // namespace

TEST(TuiTraceLoad, DemoTraceHasTheFixturesCallStructure)
{
	auto loaded = load_trace_file(kDemo);
	ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
	EXPECT_TRUE(loaded->note.empty()) << loaded->note;
	const TraceTree &tree = loaded->tree;
	EXPECT_EQ(tree.unit, "ns");
	EXPECT_EQ(tree.title, "demo.vtrace");
	ASSERT_EQ(child_names(tree.root), (std::vector<std::string>{"_start"}));
	const TraceNode &start = child(tree.root, 0);
	EXPECT_FALSE(start.timed);  // never returned
	EXPECT_EQ(start.note, "already running, still running");
	const TraceNode &main = child(start, 0);
	EXPECT_EQ(main.name, "main");
	EXPECT_EQ(main.note, "already running");
	EXPECT_EQ(child_names(main), (std::vector<std::string>{"leaf", "leaf2", "loop_fn", "outer"}));
	// expected.graph: leaf 0.100 us, leaf2 0.100, loop_fn 0.600, outer 0.400,
	// middle 0.200 (unwound), inner 0.100, main 1.600.
	EXPECT_EQ(child(main, 0).duration, 100u);
	EXPECT_EQ(child(main, 1).duration, 100u);
	EXPECT_EQ(child(main, 2).duration, 600u);
	EXPECT_EQ(child_names(child(main, 2)), (std::vector<std::string>{"leaf"}));
	const TraceNode &outer = child(main, 3);
	EXPECT_EQ(outer.duration, 400u);
	const TraceNode &middle = child(outer, 0);
	EXPECT_EQ(middle.name, "middle");
	EXPECT_EQ(middle.duration, 200u);
	EXPECT_EQ(middle.note, "unwound");
	EXPECT_EQ(child_names(middle), (std::vector<std::string>{"inner"}));
	EXPECT_EQ(main.duration, 1600u);
}

// The trace pane shows the tree `vtice report` renders: a function entered
// by a jump from another's body (a tail call) nests under it, as in ftrace.
TEST(TuiTraceLoad, TailCallsNestAsInTheReport)
{
	// caller: call middle; middle: jmp target; target: ret (back to caller).
	std::vector<std::uint8_t> code(0x300, 0x90);
	const std::uint8_t call_middle[] = {0xe8, 0xfb, 0x00, 0x00, 0x00};  // 0x1000 -> 0x1100
	const std::uint8_t jmp_target[] = {0xe9, 0xfb, 0x00, 0x00, 0x00};   // 0x1100 -> 0x1200
	std::copy(std::begin(call_middle), std::end(call_middle), code.begin());
	std::copy(std::begin(jmp_target), std::end(jmp_target), code.begin() + 0x100);
	code[0x200] = 0xc3;
	auto branch = [](std::uint64_t tsc, std::uint64_t from, std::uint64_t to) {
		vtice_record r{};
		r.type = VTICE_REC_BRANCH;
		r.tsc = tsc;
		r.u.branch.from = from;
		r.u.branch.to = to;
		return r;
	};
	std::vector<vtice_record> records = {branch(1, 0x1000, 0x1100), branch(2, 0x1100, 0x1200),
					     branch(3, 0x1200, 0x1005)};
	std::vector<trace::TraceSymbol> symbols = {{0x1000, 0x100, "caller"}, {0x1100, 0x100, "middle"},
						   {0x1200, 0x100, "target"}};
	trace::TraceWriter writer({});
	writer.add_records(records);
	writer.add_code(0x1000, code);
	writer.add_symbols(symbols);
	std::string path = ::testing::TempDir() + "/tailcall.vtrace";
	ASSERT_TRUE(trace::write_file(path, writer.finish()).ok());
	auto loaded = load_trace_file(path);
	ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
	const TraceNode &caller = child(loaded->tree.root, 0);
	ASSERT_EQ(child_names(caller), (std::vector<std::string>{"middle"}));
	EXPECT_EQ(child_names(child(caller, 0)), (std::vector<std::string>{"target"}));
}

TEST(TuiTraceLoad, MissingFileIsAnError)
{
	auto loaded = load_trace_file("/nonexistent/x.vtrace");
	ASSERT_FALSE(loaded.ok());
	EXPECT_NE(loaded.error().to_string().find("x.vtrace"), std::string::npos) << loaded.error().to_string();
}

// A chain 1000 calls deep (a hostile or runaway trace) is cut at
// kMaxTraceDepth with a note, and the pane can fold and draw it.
TEST(TuiTraceLoad, DeepNestingIsCutWithANote)
{
	trace::CallTree tree;
	tree.nodes.push_back({});
	tree.nodes[0].kind = trace::NodeKind::Root;
	tree.roots.push_back(0);
	const std::uint32_t depth = 1000;
	for (std::uint32_t i = 1; i <= depth; ++i) {
		trace::CallNode node;
		node.entry = 0x1000 + i;
		node.parent = i - 1;
		node.end = trace::NodeEnd::Returned;
		node.start_tsc = i;
		node.end_tsc = 2 * depth - i;
		node.self_insns = 2;
		tree.nodes.push_back(node);
		tree.nodes[i - 1].first_child = tree.nodes[i - 1].last_child = i;
	}
	TraceTree converted = convert_call_tree(tree, 0, {});
	EXPECT_EQ(converted.unit, "insn");  // no TSC rate: instructions, children included
	const TraceNode *node = &converted.root;
	int levels = 0;
	while (!node->children.empty()) {
		node = &node->children.front();
		++levels;
	}
	EXPECT_EQ(levels, kMaxTraceDepth);
	EXPECT_EQ(node->note, "deeper calls cut");
	// The cut calls still count: 2 instructions in each of the 1000 frames.
	EXPECT_EQ(converted.root.children[0].duration, 2 * depth);
	EXPECT_EQ(node->duration, 2u * (depth - kMaxTraceDepth + 1));
	// With a TSC rate: ticks 1 .. 1999 at 1 GHz (1,000,000 kHz) are 1998 ns.
	TraceTree timed = convert_call_tree(tree, 1000000, {});
	EXPECT_EQ(timed.unit, "ns");
	EXPECT_EQ(timed.root.children[0].duration, 2 * depth - 2);
	TraceView view;
	view.set_tree(&converted);
	view.expand_all();
	EXPECT_EQ(view.rows().size(), static_cast<std::size_t>(kMaxTraceDepth));
}

// On an instruction clock each call keeps where it ran, for a replay to be
// found in: a call already running at the trace's start ran from 0, one
// whose return never came runs on, a lost-records marker ran nothing.
TEST(TuiTraceLoad, InstructionClockedCallsKeepWhereTheyRan)
{
	trace::CallTree tree;
	tree.nodes.resize(5);
	tree.nodes[0].kind = trace::NodeKind::Root;
	tree.roots.push_back(0);
	auto link = [&tree](std::uint32_t parent, std::uint32_t child) {
		trace::CallNode &p = tree.nodes[parent];
		tree.nodes[child].parent = parent;
		if (p.last_child == trace::kNoNode)
			p.first_child = child;
		else
			tree.nodes[p.last_child].next_sibling = child;
		p.last_child = child;
	};
	tree.nodes[1] = {.start_tsc = 5, .end_tsc = 40, .kind = trace::NodeKind::Partial, .end = trace::NodeEnd::Returned};
	tree.nodes[2] = {.start_tsc = 7, .end_tsc = 12, .end = trace::NodeEnd::Returned};
	tree.nodes[3] = {.start_tsc = 12, .lost = 3, .kind = trace::NodeKind::Lost};
	tree.nodes[4] = {.start_tsc = 20};  // open: no return seen
	link(0, 1);
	for (std::uint32_t i = 2; i <= 4; i++)
		link(1, i);
	TraceTree converted = convert_call_tree(tree, 0, {});
	EXPECT_TRUE(converted.instruction_clock);
	const TraceNode &partial = child(converted.root, 0);
	EXPECT_EQ(partial.clock_start, 0u);
	EXPECT_EQ(partial.clock_end, 40u);
	EXPECT_EQ(child(partial, 0).clock_start, 7u);
	EXPECT_EQ(child(partial, 0).clock_end, 12u);
	EXPECT_EQ(child(partial, 1).clock_start, child(partial, 1).clock_end);
	EXPECT_EQ(child(partial, 2).clock_start, 20u);
	EXPECT_EQ(child(partial, 2).clock_end, kClockOpen);
	EXPECT_FALSE(convert_call_tree(tree, 1000000, {}).instruction_clock) << "a TSC clock is time";
}

TEST(TuiTraceLoad, GraphCommandOpensTheFileInTheTracePane)
{
	tui::testing::FakeModel model;
	tui::testing::FakeTerminal terminal(40, 140);
	App app(terminal, model);
	for (char ch : "graph " + kDemo)
		app.handle_key(static_cast<unsigned char>(ch));
	app.handle_key(kKeyEnter);
	app.render();
	EXPECT_EQ(app.focus(), PaneId::Trace);
	app.handle_key(key_f(2));  // zoom: the whole width for the graph
	app.render();
	EXPECT_TRUE(terminal.shows("[trace  (demo.vtrace, 6 rows, ")) << terminal.screen();
	EXPECT_TRUE(terminal.shows("               | _start() { /* already running, still running */")) << terminal.screen();
	EXPECT_TRUE(terminal.shows("     1600 ns   |   main() { /* already running */")) << terminal.screen();
	// loop_fn sits at the third level with a call inside: folded at first.
	EXPECT_TRUE(terminal.shows("      600 ns   |     loop_fn() {...}  +1")) << terminal.screen();
	// Fold main: its calls vanish from the pane.
	app.handle_key(kKeyDown);
	app.handle_key(kKeyEnter);
	app.render();
	EXPECT_FALSE(terminal.shows("loop_fn")) << terminal.screen();
	EXPECT_TRUE(terminal.shows("main() {...}  +4 /* already running */")) << terminal.screen();

	app.handle_key(key_f(2));
	for (char ch : std::string("graph /nonexistent.vtrace"))
		app.handle_key(static_cast<unsigned char>(ch));
	app.handle_key(kKeyEnter);
	app.render();
	EXPECT_TRUE(terminal.shows("graph: ")) << terminal.screen();
}

// The engine's `trace` writes a trace file; the screen reads it back into the
// trace pane, choosing a file itself when the user gave no -o.
TEST(TuiTraceLoad, TraceCommandOutputOpensInTheTracePane)
{
	tui::testing::FakeModel model;
	model.trace_source = kDemo;
	tui::testing::FakeTerminal terminal(40, 140);
	App app(terminal, model);
	auto type = [&](const std::string &text) {
		for (char ch : text)
			app.handle_key(static_cast<unsigned char>(ch));
		app.handle_key(kKeyEnter);
		app.render();
	};
	auto executed = [&] {
		for (auto it = model.log.rbegin(); it != model.log.rend(); ++it)
			if (it->rfind("execute ", 0) == 0)
				return *it;
		return std::string();
	};
	type("trace syscall openat");
	std::string sent = executed();
	auto at = sent.find(" -o ");
	ASSERT_NE(at, std::string::npos) << sent;
	std::string path = sent.substr(at + 4);
	path = path.substr(0, path.find(" "));
	EXPECT_NE(path.find("vtice-tui-"), std::string::npos) << path;
	EXPECT_NE(sent.find(" --quiet"), std::string::npos) << sent;  // the pane shows the graph
	EXPECT_TRUE(terminal.shows("_start() {")) << terminal.screen();
	EXPECT_EQ(app.focus(), PaneId::Trace);
	std::remove(path.c_str());

	std::string mine = ::testing::TempDir() + "/mine.vtrace";
	app.set_focus(PaneId::Command);
	type("trace syscall openat -o " + mine);
	EXPECT_EQ(executed(), "execute trace syscall openat -o " + mine + " --quiet");
	EXPECT_TRUE(terminal.shows("(mine.vtrace, ")) << terminal.screen();
	std::remove(mine.c_str());
}
