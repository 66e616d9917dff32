#include "canvas.hpp"

#include <algorithm>

#include "vtice/escape.hpp"

namespace vtice::tui {

// Every cell's text passes here: what the target or a file put in it
// (symbols, memory, the kernel's log) must not drive the terminal, so it is
// escaped (vtice/escape.hpp); a tab is one blank in a cell.
void Canvas::text(int row, int col, std::string_view raw, Style style)
{
	if (row < 0 || row >= rect_.rows || col >= rect_.cols)
		return;
	std::string safe(raw);
	std::replace(safe.begin(), safe.end(), '\t', ' ');
	safe = escape_text(safe, Layout::Field);
	std::string_view text = safe;
	if (col < 0) {
		if (static_cast<int>(text.size()) <= -col)
			return;
		text.remove_prefix(-col);
		col = 0;
	}
	auto room = static_cast<std::size_t>(rect_.cols - col);
	if (text.size() > room)
		text = text.substr(0, room);
	terminal_.put(rect_.row + row, rect_.col + col, text, style);
}

void Canvas::line(int row, std::string_view text, Style style)
{
	this->text(row, 0, fit(text, rect_.cols), style);
}

std::string fit(std::string_view text, int width)
{
	if (width <= 0)
		return {};
	std::string out(text.substr(0, static_cast<std::size_t>(width)));
	out.resize(static_cast<std::size_t>(width), ' ');
	return out;
}

}  // namespace vtice::tui
