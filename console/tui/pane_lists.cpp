// The two list panes: backtrace and breakpoints.
#include <algorithm>
#include <cstdio>

#include "panes.hpp"

namespace vtice::tui {

static void draw_list(Canvas &body, int top, int cursor, bool has_focus_marks,
		      const std::vector<std::string> &lines, const std::string &empty)
{
	if (lines.empty()) {
		body.line(0, empty, Style::Dim);
		return;
	}
	for (int i = 0; i < body.rows() && top + i < static_cast<int>(lines.size()); ++i) {
		bool at_cursor = has_focus_marks && top + i == cursor;
		body.line(i, lines[top + i], at_cursor ? Style::Cursor : Style::Normal);
	}
}

void BacktracePane::on_stop()
{
	frames_ = model_.backtrace(64);
	cursor_ = top_ = 0;
}

void BacktracePane::draw(Canvas &body)
{
	height_ = std::max(body.rows(), 1);
	std::vector<std::string> lines;
	for (const auto &frame : frames_) {
		char level[16];
		std::snprintf(level, sizeof(level), "#%-2d ", frame.level);
		lines.push_back(level + hex(frame.pc).substr(2) + "  " + frame.location);
	}
	draw_list(body, top_, cursor_, true, lines, "(no frames)");
}

KeyFlags BacktracePane::on_key(Key key)
{
	int count = static_cast<int>(frames_.size());
	if (key == kKeyEnter && cursor_ < count) {
		host_.show_code(frames_[cursor_].pc);
		return kConsumed;
	}
	return list_key(key, cursor_, top_, count, height_);
}

void BreakpointsPane::on_stop()
{
	breakpoints_ = model_.breakpoints();
	int count = static_cast<int>(breakpoints_.size());
	move_cursor(cursor_, top_, count, height_, 0);
}

void BreakpointsPane::draw(Canvas &body)
{
	height_ = std::max(body.rows(), 1);
	std::vector<std::string> lines;
	for (const auto &bp : breakpoints_) {
		char head[48];
		std::snprintf(head, sizeof(head), "%-3d %-5s %c %4llu ", bp.id, bp.kind.c_str(),
			      bp.enabled ? 'y' : 'n', static_cast<unsigned long long>(bp.hits));
		lines.push_back(head + hex(bp.address).substr(2) + "  " + bp.location);
	}
	draw_list(body, top_, cursor_, true, lines, "(none: F9 in disassembly or 'break SYMBOL')");
}

KeyFlags BreakpointsPane::on_key(Key key)
{
	int count = static_cast<int>(breakpoints_.size());
	if (cursor_ < count && key == kKeyEnter) {
		host_.show_code(breakpoints_[cursor_].address);
		return kConsumed;
	}
	if (cursor_ < count && key == kKeyDelete) {
		auto removed = model_.toggle_breakpoint(breakpoints_[cursor_].address);
		if (!removed)
			host_.print(removed.error().to_string(), Style::Error);
		on_stop();
		return kConsumed;
	}
	return list_key(key, cursor_, top_, count, height_);
}

}  // namespace vtice::tui
