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

// Columns, widest first: marks, address, <location>, bytes, text. A narrow
// pane drops the bytes, then the address (the title still shows the
// cursor's), then shortens the location, so the instruction text keeps room.
constexpr int kBytesMinCols = 110;
constexpr std::size_t kBytesWidth = 24;
constexpr int kTextMinCols = 24;

struct Columns {
	bool address = true;
	bool bytes = false;
	int location = 0;  // width of the name inside <>
};

static Columns choose_columns(int cols, int location)
{
	Columns c;
	c.location = location;
	c.bytes = cols >= kBytesMinCols;
	int used = 2 + 18 + location + 4 + (c.bytes ? static_cast<int>(kBytesWidth) + 1 : 0);
	if (cols - used >= kTextMinCols)
		return c;
	c.address = false;
	used -= 18;
	if (cols - used < kTextMinCols)
		c.location = std::max(8, location - (kTextMinCols - (cols - used)));
	return c;
}

// "do_sys_op~+0x5": the offset matters more than the name's tail.
static std::string shorten_location(const std::string &location, std::size_t width)
{
	if (location.size() <= width)
		return location;
	auto plus = location.rfind('+');
	std::string suffix = plus == std::string::npos ? "" : location.substr(plus);
	if (suffix.size() + 2 > width)
		return location.substr(0, width);
	return location.substr(0, width - suffix.size() - 1) + "~" + suffix;
}

static std::string disasm_line(const DisasmRow &row, const Columns &columns)
{
	std::string line;
	line += row.breakpoint ? 'B' : ' ';
	line += row.current ? '>' : ' ';
	if (columns.address)
		line += hex(row.address).substr(2) + "  ";
	auto width = static_cast<std::size_t>(columns.location);
	std::string where = shorten_location(row.location, width);
	line += "<" + where + ">";
	line.append(width - where.size() + 2, ' ');
	if (columns.bytes) {
		std::string column = row.bytes.substr(0, kBytesWidth);
		column.resize(kBytesWidth + 1, ' ');
		line += column;
	}
	line += row.text;
	return line;
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
	Columns columns = choose_columns(body.cols(), static_cast<int>(location_width));
	for (int i = 0; i < height_ && i < static_cast<int>(rows_.size()); ++i) {
		const auto &row = rows_[i];
		bool at_cursor = cursor_ && row.address == *cursor_;
		Style plain = row.breakpoint ? Style::Breakpoint : Style::Normal;
		body.line(i, disasm_line(row, columns), row.current ? Style::Current : cursor_style(at_cursor, plain));
		if (at_cursor && row.current)  // the cursor on RIP: mark the cursor in the margin
			body.text(i, 0, row.breakpoint ? "B>" : " >", cursor_style(true, Style::Current));
	}
}

}  // namespace vtice::tui
