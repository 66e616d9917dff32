#include <algorithm>
#include <cstdio>

#include "panes.hpp"

namespace vtice::tui {

std::string TracePane::title() const
{
	const TraceTree *tree = view_.tree();
	if (!tree)
		return "trace";
	std::string from = tree->title.empty() ? "" : tree->title + ", ";
	return "trace  (" + from + std::to_string(view_.rows().size()) + " rows, Enter/Space folds)";
}

void TracePane::show_tree(const TraceTree *tree)
{
	shown_ = tree;
	cursor_ = top_ = 0;
	on_stop();
}

void TracePane::on_stop()
{
	view_.set_tree(shown_ ? shown_ : model_.trace());
	follow_replay();
	int count = static_cast<int>(view_.rows().size());
	move_cursor(cursor_, top_, count, height_, 0);
}

// On a recording's replay the cursor goes to the call the replay stands in,
// unfolding what hides it, at every stop (a step either way included).
void TracePane::follow_replay()
{
	replay_call_ = nullptr;
	const TraceTree *tree = view_.tree();
	if (!tree || !tree->instruction_clock)
		return;
	auto instruction = model_.replay_instruction();
	if (!instruction)
		return;
	auto path = calls_at_instruction(*tree, *instruction);
	std::size_t row = view_.reveal(path);
	if (row == TraceView::npos)
		return;
	replay_call_ = path.back();
	cursor_ = static_cast<int>(row);
	recenter_ = true;
}

// function_graph's shape: duration column, then the call nested by depth;
// "{...}" marks a folded call, "{" an open one, ";" a leaf.
std::string TracePane::render_row(const TraceView::Row &row) const
{
	char duration[32];
	if (row.node->timed)
		std::snprintf(duration, sizeof(duration), "%9llu %-4s | ",
			      static_cast<unsigned long long>(row.node->duration), view_.tree()->unit.c_str());
	else
		std::snprintf(duration, sizeof(duration), "%14s | ", "");
	std::string line = replay_call_ ? (row.node == replay_call_ ? "=> " : "   ") : "";
	line += duration;
	line.append(static_cast<std::size_t>(row.depth) * 2, ' ');
	line += row.node->name + "()";
	if (row.node->children.empty())
		line += ";";
	else if (view_.folded(*row.node))
		line += " {...}  +" + std::to_string(row.node->children.size());
	else
		line += " {";
	if (!row.node->note.empty())
		line += " /* " + row.node->note + " */";
	return line;
}

void TracePane::draw(Canvas &body)
{
	height_ = std::max(body.rows(), 1);
	if (!view_.tree()) {
		body.line(0, "(no trace: 'graph FILE' opens a trace file)", Style::Dim);
		return;
	}
	const auto &rows = view_.rows();
	if (recenter_) {
		// A third of the pane above the replay's call shows who called it.
		top_ = std::max(0, cursor_ - height_ / 3);
		recenter_ = false;
	}
	for (int i = 0; i < height_ && top_ + i < static_cast<int>(rows.size()); ++i)
		body.line(i, render_row(rows[top_ + i]), cursor_style(top_ + i == cursor_));
}

// The row whose node should keep the cursor after a fold changes the rows.
static std::size_t top_level_row(const std::vector<TraceView::Row> &rows, std::size_t row)
{
	while (rows[row].parent != TraceView::npos)
		row = rows[row].parent;
	return row;
}

KeyFlags TracePane::fold_key(Key key)
{
	auto row = static_cast<std::size_t>(cursor_);
	const auto &rows = view_.rows();
	if (row >= rows.size())
		return kIgnored;
	const TraceNode *keep = rows[row].node;
	switch (key) {
	case kKeyEnter: case ' ': view_.toggle(row); break;
	case '+': case '*': view_.expand_all(); break;
	case '-':
		keep = rows[top_level_row(rows, row)].node;
		view_.collapse_all();
		break;
	case kKeyRight: view_.unfold(row); break;
	case kKeyLeft:
		if (view_.foldable(row) && !view_.folded(*keep))
			view_.fold(row);
		else if (rows[row].parent != TraceView::npos)
			keep = rows[rows[row].parent].node;
		break;
	default: return kIgnored;
	}
	for (std::size_t i = 0; i < view_.rows().size(); ++i)
		if (view_.rows()[i].node == keep)
			cursor_ = static_cast<int>(i);
	move_cursor(cursor_, top_, static_cast<int>(view_.rows().size()), height_, 0);
	return kConsumed;
}

KeyFlags TracePane::on_key(Key key)
{
	if (KeyFlags flags = fold_key(key))
		return flags;
	return list_key(key, cursor_, top_, static_cast<int>(view_.rows().size()), height_);
}

}  // namespace vtice::tui
