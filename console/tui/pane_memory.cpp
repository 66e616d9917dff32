#include <algorithm>
#include <cstdio>
#include <optional>

#include "panes.hpp"

namespace vtice::tui {

int MemoryPane::bytes_per_row(int cols)
{
	// "ffffffff81000000  " + 3 per byte + " |" + 1 per byte + "|"
	for (int width : {16, 8, 4})
		if (18 + width * 4 + 3 <= cols)
			return width;
	return 4;
}

std::string MemoryPane::title() const
{
	return address_ ? "memory  " + hex(*address_) : "memory";
}

void MemoryPane::show(std::uint64_t address)
{
	address_ = address;
	pinned_ = true;
}

void MemoryPane::on_stop()
{
	shown_.valid = false;
	if (pinned_)
		return;
	address_ = model_.default_memory_address();
}

using Cells = std::vector<std::optional<std::uint8_t>>;

static std::string dump_row(std::uint64_t address, const Cells &cells, std::size_t offset, int width)
{
	char head[24];
	std::snprintf(head, sizeof(head), "%016llx  ", static_cast<unsigned long long>(address));
	std::string line = head;
	std::string ascii;
	for (int i = 0; i < width; ++i) {
		std::size_t at = offset + i;
		if (at >= cells.size() || !cells[at]) {
			line += "?? ";
			ascii += ' ';
			continue;
		}
		char cell[4];
		std::uint8_t byte = *cells[at];
		std::snprintf(cell, sizeof(cell), "%02x ", byte);
		line += cell;
		ascii += byte >= 0x20 && byte < 0x7f ? static_cast<char>(byte) : '.';
	}
	return line + "|" + ascii + "|";
}

// What the model can read of [address, address + length), byte by byte. A
// read that fails whole is tried again in pieces of kPiece: a replay knows
// memory byte by byte, a kernel maps it page by page, and what is readable
// shows. The whole read's failure is kept for when nothing is.
void MemoryPane::read_cells(std::uint64_t address, std::size_t length)
{
	constexpr std::size_t kPiece = 8;
	shown_ = Shown{true, address, Cells(length), std::nullopt};
	auto whole = model_.read_memory(address, length);
	if (whole) {
		std::copy(whole->begin(), whole->end(), shown_.cells.begin());
		return;
	}
	shown_.failure = whole.error();
	for (std::size_t at = 0; at < length; at += kPiece) {
		auto piece = model_.read_memory(address + at, std::min(kPiece, length - at));
		for (std::size_t i = 0; piece && i < piece->size(); ++i)
			shown_.cells[at + i] = (*piece)[i];
	}
}

void MemoryPane::draw(Canvas &body)
{
	width_ = bytes_per_row(body.cols());
	height_ = std::max(body.rows(), 1);
	if (!address_) {
		body.line(0, "(no address: 'mem EXPR' picks one)", Style::Dim);
		return;
	}
	if (model_.state() != RunState::Stopped) {
		body.line(0, "(target running)", Style::Dim);
		shown_.valid = false;
		return;
	}
	std::size_t length = static_cast<std::size_t>(width_) * height_;
	if (!shown_.valid || shown_.address != *address_ || shown_.cells.size() != length)
		read_cells(*address_, length);
	const Cells &cells = shown_.cells;
	bool none = std::none_of(cells.begin(), cells.end(), [](const auto &cell) { return cell.has_value(); });
	for (int row = 0; row < height_; ++row) {
		std::size_t offset = static_cast<std::size_t>(row) * width_;
		body.line(row, dump_row(*address_ + offset, cells, offset, width_));
	}
	if (none && shown_.failure)
		body.line(0, shown_.failure->to_string(), Style::Error);
}

KeyFlags MemoryPane::on_key(Key key)
{
	if (!address_)
		return kIgnored;
	std::int64_t step = 0;
	switch (key) {
	case kKeyUp: step = -width_; break;
	case kKeyDown: step = width_; break;
	case kKeyPageUp: step = -static_cast<std::int64_t>(width_) * height_; break;
	case kKeyPageDown: step = static_cast<std::int64_t>(width_) * height_; break;
	default: return kIgnored;
	}
	address_ = *address_ + static_cast<std::uint64_t>(step);
	pinned_ = true;
	return kConsumed;
}

}  // namespace vtice::tui
