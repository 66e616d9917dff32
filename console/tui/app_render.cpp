// Drawing the whole screen: status line, titles, panes, separators.
#include <cstdio>

#include "app.hpp"

namespace vtice::tui {

static const char *state_name(RunState state)
{
	switch (state) {
	case RunState::Stopped: return "stopped";
	case RunState::Running: return "running";
	case RunState::Exited: return "exited";
	case RunState::Disconnected: return "disconnected";
	}
	return "?";
}

void App::draw_status()
{
	if (layout_.status.empty())
		return;
	Canvas status(terminal_, layout_.status);
	std::string state = state_name(model_.state());
	std::string reason = model_.state() == RunState::Stopped ? model_.stop_reason() : "";
	if (!reason.empty())
		state += ": " + reason;
	std::string text = " vtice  " + model_.target_name() + "  [" + state + "]";
	// A target that runs backwards (serve-replay) gets its Shift keys named too.
	const std::string keys = model_.runs_backwards()
		? "F1 help  F5 go  F8 into  F10 over  F12 out  Shift: back  F9 bp  F2 zoom  Tab pane "
		: "F1 help  F5 go  F8 into  F10 over  F12 out  F9 bp  F2 zoom  Tab pane ";
	int room = status.cols() - static_cast<int>(text.size()) - 2;
	status.line(0, text, Style::Status);
	if (room >= static_cast<int>(keys.size()))
		status.text(0, status.cols() - static_cast<int>(keys.size()), keys, Style::Status);
}

// Title bars carry the focus as text ([name]) as well as colour, so a
// monochrome terminal and a text capture both show where the keys go.
void App::draw_pane(Pane &pane, const Rect &rect)
{
	bool focused = pane.id() == focus_ || pane.id() == PaneId::Help;
	Rect body = rect;
	if (pane.id() != PaneId::Command) {
		std::string title = focused ? "[" + pane.title() + "]" : " " + pane.title() + " ";
		Canvas(terminal_, {rect.row, rect.col, 1, rect.cols})
			.line(0, title, focused ? Style::TitleFocused : Style::Title);
		body = {rect.row + 1, rect.col, rect.rows - 1, rect.cols};
	}
	if (body.empty())
		return;
	Canvas canvas(terminal_, body);
	pane.set_focused(focused);
	pane.draw(canvas);
}

void App::render()
{
	Size size = terminal_.size();
	LayoutRequest request{size, registers_->rows_needed(size.cols), zoomed_};
	if (help_visible_)
		request.zoomed = PaneId::Help;
	layout_ = compute_layout(request);
	// A resize can hide the focused pane; the keys must still go somewhere.
	if (!help_visible_ && !layout_.visible(focus_))
		focus_ = PaneId::Command;
	terminal_.clear();
	draw_status();
	for (int i = 0; i < kPaneCount; ++i)
		if (!layout_.panes[i].empty())
			draw_pane(*panes_[i], layout_.panes[i]);
	for (const auto &rule : layout_.separators) {
		Canvas canvas(terminal_, rule);
		for (int row = 0; row < rule.rows; ++row)
			canvas.text(row, 0, "|", Style::Dim);
	}
	const Rect &command = layout_[PaneId::Command];
	if (focus_ == PaneId::Command && !command.empty())
		terminal_.set_cursor(std::make_pair(command.row, command.col + command_->cursor_column(command.cols)));
	else
		terminal_.set_cursor(std::nullopt);
	terminal_.flush();
}

int run_tui(Model &model, const std::vector<std::string> &intro, const std::string &graph)
{
	auto terminal = open_curses_terminal();
	if (!terminal) {
		std::fprintf(stderr, "vtice attach: %s\n", terminal.error().to_string().c_str());
		return 1;
	}
	App app(**terminal, model, intro);
	if (!graph.empty())
		app.open_graph(graph);
	return app.run();
}

}  // namespace vtice::tui
