#include <algorithm>

#include "panes.hpp"

namespace vtice::tui {

std::string DisasmPane::title() const
{
	if (!cursor_)
		return "disassembly";
	return "disassembly  " + hex(*cursor_);
}

int DisasmPane::find(std::uint64_t address) const
{
	for (std::size_t i = 0; i < rows_.size(); ++i)
		if (rows_[i].address == address)
			return static_cast<int>(i);
	return -1;
}

void DisasmPane::fetch_from(std::uint64_t top)
{
	rows_ = model_.disassemble(top, 0, height_);
}

// Puts address about a third of the way down, so the code leading to it shows.
void DisasmPane::fetch_around(std::uint64_t address)
{
	rows_ = model_.disassemble(address, height_ / 3, height_);
	if (static_cast<int>(rows_.size()) > height_)
		rows_.resize(height_);
}

void DisasmPane::show(std::uint64_t address)
{
	cursor_ = address;
	int at = find(address);
	if (at < 0 || at >= height_)
		fetch_around(address);
}

void DisasmPane::on_stop()
{
	auto pc = model_.pc();
	if (!pc) {
		rows_.clear();
		return;
	}
	cursor_ = *pc;
	// Keep the window still while stepping inside it, as gdb's TUI does.
	int at = rows_.empty() ? -1 : find(*pc);
	if (at < 0 || at >= height_ - 1)
		fetch_around(*pc);
	else
		fetch_from(rows_.front().address);
}

std::optional<std::uint64_t> DisasmPane::cursor_address() const
{
	return cursor_;
}

void DisasmPane::move(int delta)
{
	if (rows_.empty() || !cursor_)
		return;
	int at = std::max(find(*cursor_), 0) + delta;
	if (at < 0) {
		auto before = model_.disassemble(rows_.front().address, -at, 0);
		if (before.empty())
			return;  // no instruction boundary known above the window
		fetch_from(before.front().address);
		at = 0;
	} else if (at >= static_cast<int>(rows_.size()) || at >= height_) {
		int overflow = at - std::min(static_cast<int>(rows_.size()), height_) + 1;
		std::size_t new_top = std::min<std::size_t>(overflow, rows_.size() - 1);
		fetch_from(rows_[new_top].address);
		at = std::min(at - static_cast<int>(new_top), static_cast<int>(rows_.size()) - 1);
	}
	if (!rows_.empty())
		cursor_ = rows_[std::clamp(at, 0, static_cast<int>(rows_.size()) - 1)].address;
}

KeyFlags DisasmPane::on_key(Key key)
{
	int page = std::max(height_ - 1, 1);
	switch (key) {
	case kKeyUp: move(-1); break;
	case kKeyDown: move(1); break;
	case kKeyPageUp: move(-page); break;
	case kKeyPageDown: move(page); break;
	case kKeyHome:
		if (auto pc = model_.pc())
			show(*pc);
		break;
	default: return kIgnored;
	}
	return kConsumed;
}

// Byte column only when the pane is wide enough to keep the text readable.
constexpr int kBytesMinCols = 110;
constexpr std::size_t kBytesWidth = 24;

static std::string disasm_line(const DisasmRow &row, int location_width, bool bytes)
{
	std::string line;
	line += row.breakpoint ? 'B' : ' ';
	line += row.current ? '>' : ' ';
	line += hex(row.address).substr(2);
	line += "  ";
	std::string where = row.location.size() > static_cast<std::size_t>(location_width)
		? row.location.substr(0, location_width) : row.location;
	line += "<" + where + ">";
	line.append(location_width - where.size() + 2, ' ');
	if (bytes) {
		std::string column = row.bytes.substr(0, kBytesWidth);
		column.resize(kBytesWidth + 1, ' ');
		line += column;
	}
	line += row.text;
	return line;
}

static Style disasm_style(const DisasmRow &row, bool cursor)
{
	if (row.current)
		return Style::Current;
	if (cursor)
		return Style::Cursor;
	return row.breakpoint ? Style::Breakpoint : Style::Normal;
}

void DisasmPane::draw(Canvas &body)
{
	bool resized = body.rows() != height_;
	height_ = std::max(body.rows(), 1);
	if (resized && cursor_)
		show(*cursor_);
	if (rows_.empty()) {
		body.line(0, model_.state() == RunState::Running ? "(running: Ctrl-C interrupts)" : "(no code)", Style::Dim);
		return;
	}
	std::size_t location_width = 8;
	for (const auto &row : rows_)
		location_width = std::max(location_width, row.location.size());
	location_width = std::min<std::size_t>(location_width, 30);
	for (int i = 0; i < height_ && i < static_cast<int>(rows_.size()); ++i) {
		const auto &row = rows_[i];
		bool at_cursor = cursor_ && row.address == *cursor_;
		body.line(i, disasm_line(row, static_cast<int>(location_width), body.cols() >= kBytesMinCols),
			  disasm_style(row, at_cursor));
		if (at_cursor && row.current)
			body.text(i, 0, row.breakpoint ? "B>" : " >", Style::Cursor);
	}
}

}  // namespace vtice::tui
