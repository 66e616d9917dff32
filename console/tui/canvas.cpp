#include "canvas.hpp"

namespace vtice::tui {

void Canvas::text(int row, int col, std::string_view text, Style style)
{
	if (row < 0 || row >= rect_.rows || col >= rect_.cols)
		return;
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
