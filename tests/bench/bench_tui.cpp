// The TUI redraws the whole screen after every key (curses then sends only
// the cells that changed). This measures that redraw, and the keys most
// pressed, on a fake terminal over the scripted model, so the figure is the
// TUI's own cost without terminal or target latency.
#include <benchmark/benchmark.h>

#include "app.hpp"
#include "tui_fake_model.hpp"
#include "tui_fake_terminal.hpp"

using namespace vtice::tui;

static void BM_RenderFullScreen(benchmark::State &state)
{
	testing::FakeModel model;
	testing::FakeTerminal terminal(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
	App app(terminal, model);
	for (auto _ : state)
		app.render();
	state.SetLabel(std::to_string(state.range(1)) + "x" + std::to_string(state.range(0)));
}
BENCHMARK(BM_RenderFullScreen)->Args({24, 80})->Args({40, 120})->Args({60, 200});

// F8 and the redraw after it: step, refresh every pane, draw.
static void BM_StepAndRender(benchmark::State &state)
{
	testing::FakeModel model;
	testing::FakeTerminal terminal(40, 120);
	App app(terminal, model);
	for (auto _ : state) {
		if (model.pc_value > testing::FakeModel::kBase + 4 * 150)
			model.pc_value = testing::FakeModel::kBase;
		app.handle_key(key_f(8));
		app.render();
	}
}
BENCHMARK(BM_StepAndRender);

// Folding in a 10,000-call trace: one Enter on the first call.
static void BM_TraceFoldToggle(benchmark::State &state)
{
	TraceTree tree;
	TraceNode top{"top", 0, 1, {}};
	for (int i = 0; i < 100; ++i) {
		TraceNode mid{"mid" + std::to_string(i), 0, 1, {}};
		for (int j = 0; j < 100; ++j)
			mid.children.push_back({"leaf", 0, 1, {}});
		top.children.push_back(std::move(mid));
	}
	tree.root.children.push_back(std::move(top));
	TraceView view;
	view.set_tree(&tree);
	view.expand_all();
	for (auto _ : state)
		view.toggle(0);
	state.SetLabel(std::to_string(view.rows().size()) + " rows when open");
}
BENCHMARK(BM_TraceFoldToggle);
