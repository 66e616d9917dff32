// Fold state of the trace viewer and the keys that change it.
#include <gtest/gtest.h>

#include "panes.hpp"
#include "trace_view.hpp"
#include "tui_fake_model.hpp"
#include "tui_fake_terminal.hpp"

using namespace vtice::tui;
using vtice::tui::testing::FakeModel;
using vtice::tui::testing::FakeTerminal;

namespace {

TraceNode node(std::string name, std::uint64_t duration, std::vector<TraceNode> children = {})
{
	return {std::move(name), 0, duration, std::move(children)};
}

// do_sys_openat2 { getname { kmem_cache_alloc { memset; } } do_filp_open; }
// __x64_sys_close;
TraceTree sample_tree()
{
	TraceTree tree;
	tree.root.children = {
		node("do_sys_openat2", 100,
		     {node("getname", 40, {node("kmem_cache_alloc", 10, {node("memset", 5)})}),
		      node("do_filp_open", 20)}),
		node("__x64_sys_close", 3),
	};
	return tree;
}

// sample_tree on an instruction clock: do_sys_openat2 [0,100) { getname
// [2,42) { kmem_cache_alloc [5,15) { memset [8,13) } } do_filp_open
// [50,70) } __x64_sys_close [100,103).
TraceTree clocked_tree()
{
	TraceTree tree = sample_tree();
	tree.instruction_clock = true;
	auto clock = [](TraceNode &node, std::uint64_t start, std::uint64_t end) {
		node.clock_start = start;
		node.clock_end = end;
	};
	TraceNode &openat = tree.root.children[0];
	clock(openat, 0, 100);
	clock(openat.children[0], 2, 42);
	clock(openat.children[0].children[0], 5, 15);
	clock(openat.children[0].children[0].children[0], 8, 13);
	clock(openat.children[1], 50, 70);
	clock(tree.root.children[1], 100, 103);
	return tree;
}

std::vector<std::string> path_names(const std::vector<const TraceNode *> &path)
{
	std::vector<std::string> out;
	for (const TraceNode *node : path)
		out.push_back(node->name);
	return out;
}

std::vector<std::string> names(const TraceView &view)
{
	std::vector<std::string> out;
	for (const auto &row : view.rows())
		out.push_back(std::string(row.depth * 2, ' ') + row.node->name);
	return out;
}

}  // namespace

TEST(TuiTraceView, CallsDeeperThanTheOpenDepthStartFolded)
{
	TraceTree tree = sample_tree();
	TraceView view;
	view.set_tree(&tree);
	// kmem_cache_alloc sits at depth 2 (the third level) and has a child.
	EXPECT_EQ(names(view), (std::vector<std::string>{"do_sys_openat2", "  getname", "    kmem_cache_alloc",
							 "  do_filp_open", "__x64_sys_close"}));
	EXPECT_TRUE(view.folded(tree.root.children[0].children[0].children[0]));
	EXPECT_EQ(view.rows()[2].parent, 1u);
	EXPECT_EQ(view.rows()[0].parent, TraceView::npos);
}

TEST(TuiTraceView, ToggleFoldsAndUnfoldsKeepingNestedState)
{
	TraceTree tree = sample_tree();
	TraceView view;
	view.set_tree(&tree);
	view.toggle(2);  // open kmem_cache_alloc
	EXPECT_EQ(view.rows().size(), 6u);
	EXPECT_EQ(view.rows()[3].node->name, "memset");
	view.toggle(0);  // fold do_sys_openat2
	EXPECT_EQ(names(view), (std::vector<std::string>{"do_sys_openat2", "__x64_sys_close"}));
	view.toggle(0);  // reopen: kmem_cache_alloc is still open
	EXPECT_EQ(view.rows().size(), 6u);
	view.toggle(5);  // a leaf: nothing to fold
	EXPECT_EQ(view.rows().size(), 6u);
	view.toggle(99);  // out of range: ignored
	EXPECT_EQ(view.rows().size(), 6u);
}

TEST(TuiTraceView, ExpandAndCollapseAll)
{
	TraceTree tree = sample_tree();
	TraceView view;
	view.set_tree(&tree);
	view.expand_all();
	EXPECT_EQ(view.rows().size(), 6u);
	view.collapse_all();
	EXPECT_EQ(names(view), (std::vector<std::string>{"do_sys_openat2", "__x64_sys_close"}));
}

TEST(TuiTraceView, ANewTreeResetsTheFoldState)
{
	TraceTree first = sample_tree(), second = sample_tree();
	TraceView view;
	view.set_tree(&first);
	view.collapse_all();
	view.set_tree(&second);
	EXPECT_EQ(view.rows().size(), 5u);
	view.set_tree(nullptr);
	EXPECT_TRUE(view.rows().empty());
}

TEST(TuiTracePane, KeysFoldAtTheCursorAndRenderFunctionGraphShape)
{
	FakeModel model;
	model.tree = sample_tree();
	model.has_trace = true;
	TracePane pane(model);
	pane.on_stop();
	FakeTerminal terminal(10, 70);
	Canvas canvas(terminal, {0, 0, 10, 70});
	pane.draw(canvas);
	EXPECT_NE(terminal.row(0).find("100 insn | do_sys_openat2() {"), std::string::npos) << terminal.screen();
	EXPECT_NE(terminal.row(2).find("|     kmem_cache_alloc() {...}  +1"), std::string::npos) << terminal.screen();
	EXPECT_NE(terminal.row(4).find("3 insn | __x64_sys_close();"), std::string::npos) << terminal.screen();

	pane.on_key(kKeyDown);
	pane.on_key(kKeyDown);
	EXPECT_EQ(pane.cursor(), 2);
	EXPECT_EQ(pane.on_key(kKeyEnter), kConsumed);  // unfold kmem_cache_alloc
	EXPECT_EQ(pane.view().rows().size(), 6u);
	EXPECT_EQ(pane.on_key(' '), kConsumed);        // and fold it again
	EXPECT_EQ(pane.view().rows().size(), 5u);
	pane.on_key(kKeyLeft);  // folded already: Left goes to the parent
	EXPECT_EQ(pane.cursor(), 1);
	pane.on_key(kKeyLeft);  // open: Left folds getname
	EXPECT_EQ(pane.view().rows().size(), 4u);
	EXPECT_EQ(pane.cursor(), 1);
	pane.on_key(kKeyRight);
	EXPECT_EQ(pane.view().rows().size(), 5u);
	pane.on_key('-');  // collapse all: the cursor moves to the top-level call
	EXPECT_EQ(pane.cursor(), 0);
	EXPECT_EQ(pane.view().rows().size(), 2u);
	pane.on_key('+');
	EXPECT_EQ(pane.view().rows().size(), 6u);
}

TEST(TuiTracePane, WithoutATraceSaysHowToGetOne)
{
	FakeModel model;
	TracePane pane(model);
	pane.on_stop();
	FakeTerminal terminal(3, 60);
	Canvas canvas(terminal, {0, 0, 3, 60});
	pane.draw(canvas);
	EXPECT_TRUE(terminal.shows("no trace")) << terminal.screen();
	EXPECT_EQ(pane.on_key(kKeyEnter), kIgnored);
}

TEST(TuiTraceView, TheCallsRunningAnInstruction)
{
	TraceTree tree = clocked_tree();
	using Names = std::vector<std::string>;
	EXPECT_EQ(path_names(calls_at_instruction(tree, 9)),
		  (Names{"do_sys_openat2", "getname", "kmem_cache_alloc", "memset"}));
	EXPECT_EQ(path_names(calls_at_instruction(tree, 13)), (Names{"do_sys_openat2", "getname", "kmem_cache_alloc"}))
		<< "memset's return was instruction 12";
	EXPECT_EQ(path_names(calls_at_instruction(tree, 45)), (Names{"do_sys_openat2"}));
	EXPECT_EQ(path_names(calls_at_instruction(tree, 0)), (Names{"do_sys_openat2"}));
	EXPECT_EQ(path_names(calls_at_instruction(tree, 100)), (Names{"__x64_sys_close"}));
	EXPECT_TRUE(calls_at_instruction(tree, 103).empty());
	tree.instruction_clock = false;
	EXPECT_TRUE(calls_at_instruction(tree, 9).empty()) << "a time clock says nothing of instructions";
}

TEST(TuiTracePane, FollowsTheReplayIntoAFoldedCall)
{
	FakeModel model;
	model.tree = clocked_tree();
	model.has_trace = true;
	model.replay_at = 9;  // in memset, inside the folded kmem_cache_alloc
	TracePane pane(model);
	pane.on_stop();
	ASSERT_NE(pane.replay_call(), nullptr);
	EXPECT_EQ(pane.replay_call()->name, "memset");
	ASSERT_LT(static_cast<std::size_t>(pane.cursor()), pane.view().rows().size());
	EXPECT_EQ(pane.view().rows()[pane.cursor()].node->name, "memset");
	FakeTerminal terminal(10, 70);
	Canvas canvas(terminal, {0, 0, 10, 70});
	pane.draw(canvas);
	EXPECT_EQ(terminal.row(3).rfind("=> ", 0), 0u) << terminal.screen();
	EXPECT_NE(terminal.row(3).find("memset();"), std::string::npos) << terminal.screen();
	EXPECT_EQ(terminal.row(0).rfind("   ", 0), 0u) << terminal.screen();
	model.replay_at = 60;
	pane.on_stop();
	EXPECT_EQ(pane.replay_call()->name, "do_filp_open");
	model.replay_at.reset();  // a live target
	pane.on_stop();
	EXPECT_EQ(pane.replay_call(), nullptr);
}
