// The two list panes: backtrace and breakpoints.
#include <algorithm>
#include <cstdio>

#include "panes.hpp"

namespace vtice::tui {

template <class Row>
void ListPane<Row>::draw(Canvas &body)
{
	height_ = std::max(body.rows(), 1);
	if (rows_.empty()) {
		body.line(0, empty_text(), Style::Dim);
		return;
	}
	for (int i = 0; i < body.rows() && top_ + i < static_cast<int>(rows_.size()); ++i)
		body.line(i, format(rows_[top_ + i]), cursor_style(top_ + i == cursor_));
}

template <class Row>
KeyFlags ListPane<Row>::on_key(Key key)
{
	int count = static_cast<int>(rows_.size());
	if (key == kKeyEnter && cursor_ < count) {
		host_.show_code(address(rows_[cursor_]));
		return kConsumed;
	}
	return list_key(key, cursor_, top_, count, height_);
}

template class ListPane<FrameRow>;
template class ListPane<BreakpointRow>;

void BacktracePane::on_stop()
{
	rows_ = model_.backtrace(64);
	cursor_ = top_ = 0;
}

std::string BacktracePane::format(const FrameRow &frame) const
{
	char level[16];
	std::snprintf(level, sizeof(level), "#%-2d ", frame.level);
	return level + hex(frame.pc).substr(2) + "  " + frame.location;
}

void BreakpointsPane::on_stop()
{
	rows_ = model_.breakpoints();
	move_cursor(cursor_, top_, static_cast<int>(rows_.size()), height_, 0);
}

std::string BreakpointsPane::format(const BreakpointRow &bp) const
{
	char head[48];
	std::snprintf(head, sizeof(head), "%-3d %-5s %c %4llu ", bp.id, bp.kind.c_str(), bp.enabled ? 'y' : 'n',
		      static_cast<unsigned long long>(bp.hits));
	return head + hex(bp.address).substr(2) + "  " + bp.location;
}

KeyFlags BreakpointsPane::on_key(Key key)
{
	if (key != kKeyDelete || cursor_ >= static_cast<int>(rows_.size()))
		return ListPane::on_key(key);
	auto removed = model_.toggle_breakpoint(rows_[cursor_].address);
	if (!removed)
		host_.print(removed.error().to_string(), Style::Error);
	on_stop();
	return kConsumed;
}

}  // namespace vtice::tui
