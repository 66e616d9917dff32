#include <algorithm>
#include <cstdio>

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
	if (pinned_)
		return;
	address_ = model_.default_memory_address();
}

static std::string dump_row(std::uint64_t address, const std::vector<std::uint8_t> *bytes,
			    std::size_t offset, int width)
{
	char head[24];
	std::snprintf(head, sizeof(head), "%016llx  ", static_cast<unsigned long long>(address));
	std::string line = head;
	std::string ascii;
	for (int i = 0; i < width; ++i) {
		std::size_t at = offset + i;
		if (!bytes || at >= bytes->size()) {
			line += "?? ";
			ascii += ' ';
			continue;
		}
		char cell[4];
		std::uint8_t byte = (*bytes)[at];
		std::snprintf(cell, sizeof(cell), "%02x ", byte);
		line += cell;
		ascii += byte >= 0x20 && byte < 0x7f ? static_cast<char>(byte) : '.';
	}
	return line + "|" + ascii + "|";
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
		return;
	}
	auto bytes = model_.read_memory(*address_, static_cast<std::size_t>(width_) * height_);
	const std::vector<std::uint8_t> *data = bytes ? &bytes.value() : nullptr;
	for (int row = 0; row < height_; ++row) {
		std::size_t offset = static_cast<std::size_t>(row) * width_;
		body.line(row, dump_row(*address_ + offset, data, offset, width_),
			  row == 0 && !data ? Style::Error : Style::Normal);
	}
	if (!data)
		body.text(0, 0, bytes.error().to_string(), Style::Error);
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
