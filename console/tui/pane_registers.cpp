#include <algorithm>
#include <cstdio>

#include "panes.hpp"

namespace vtice::tui {

std::string hex(std::uint64_t value)
{
	char text[24];
	std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
	return text;
}

int RegistersPane::cell_width() const
{
	std::size_t name = 0, value = 0;
	for (const auto &reg : registers_) {
		name = std::max(name, reg.name.size());
		value = std::max(value, reg.value.size());
	}
	return static_cast<int>(name + 1 + value + 2);
}

int RegistersPane::rows_needed(int cols) const
{
	int per_row = std::max(cols / cell_width(), 1);
	int count = static_cast<int>(registers_.size());
	return std::max((count + per_row - 1) / per_row, 1);
}

void RegistersPane::draw(Canvas &body)
{
	if (registers_.empty()) {
		body.line(0, model_.state() == RunState::Running ? "(running)" : "(no registers)", Style::Dim);
		return;
	}
	// While the target runs these are the last stop's values: say so by dimming.
	bool stale = model_.state() != RunState::Stopped;
	int cell = cell_width();
	int per_row = std::max(body.cols() / cell, 1);
	int name_width = 0;
	for (const auto &reg : registers_)
		name_width = std::max(name_width, static_cast<int>(reg.name.size()));
	for (std::size_t i = 0; i < registers_.size(); ++i) {
		const auto &reg = registers_[i];
		int row = static_cast<int>(i) / per_row;
		int col = static_cast<int>(i) % per_row * cell;
		body.text(row, col, reg.name, Style::Dim);
		Style style = stale ? Style::Dim : reg.changed ? Style::Changed : Style::Normal;
		body.text(row, col + name_width + 1, reg.value, style);
	}
}

}  // namespace vtice::tui
