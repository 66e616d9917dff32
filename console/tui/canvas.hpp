// A rectangle of the terminal that clips what a pane draws into it.
#pragma once

#include <string>
#include <string_view>

#include "terminal.hpp"

namespace vtice::tui {

struct Rect {
	int row = 0;
	int col = 0;
	int rows = 0;
	int cols = 0;

	bool empty() const { return rows <= 0 || cols <= 0; }
	bool operator==(const Rect &) const = default;
};

class Canvas {
public:
	Canvas(Terminal &terminal, Rect rect) : terminal_(terminal), rect_(rect) {}

	int rows() const { return rect_.rows; }
	int cols() const { return rect_.cols; }

	// Draws text at (row, col) relative to the rectangle, clipped to it.
	void text(int row, int col, std::string_view text, Style style = Style::Normal);
	// Draws text and pads the rest of the row, so a style covers the whole line.
	void line(int row, std::string_view text, Style style = Style::Normal);

private:
	Terminal &terminal_;
	Rect rect_;
};

// Pads or cuts text to exactly width columns (the TUI draws ASCII only).
std::string fit(std::string_view text, int width);

}  // namespace vtice::tui
