// The one seam between the TUI and the screen (CONVENTIONS.md §10).
//
// Only terminal.cpp includes curses. Panes draw through a Canvas onto a
// Terminal; the unit tests substitute a fake Terminal that records a grid of
// cells and replays scripted keys, so layout, dispatch and rendering are
// tested without a tty. The real curses path is exercised under tmux.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "keys.hpp"
#include "vtice/result.hpp"

namespace vtice::tui {

// What a piece of text means; the terminal decides how it looks.
enum class Style : unsigned char {
	Normal,
	Title,         // pane title bar
	TitleFocused,  // title bar of the pane that has the keyboard
	Status,        // top status line
	Changed,       // register changed since the last stop
	Current,       // the line at RIP / the selected frame
	Breakpoint,    // line carrying a breakpoint
	Cursor,        // the pane's cursor line
	Dim,           // addresses, byte columns, hints
	Error,
	Prompt,
	Count,
};

struct Size {
	int rows = 0;
	int cols = 0;
	bool operator==(const Size &) const = default;
};

class Terminal {
public:
	virtual ~Terminal() = default;

	virtual Size size() const = 0;
	// Writes text at (row, col); anything past the right edge is dropped.
	virtual void put(int row, int col, std::string_view text, Style style) = 0;
	virtual void clear() = 0;
	// Where the hardware cursor rests after flush(); nullopt hides it.
	virtual void set_cursor(std::optional<std::pair<int, int>> at) = 0;
	virtual void flush() = 0;
	// Next key, or kKeyNone after timeout_ms (negative: wait for ever).
	virtual Key read_key(int timeout_ms) = 0;
	// After a kKeyResize: pick up the new size.
	virtual void refresh_size() = 0;
};

// Puts the tty into curses mode (raw, so Ctrl-C arrives as a key); the
// destructor restores it. Fails when stdin/stdout is not a terminal.
Result<std::unique_ptr<Terminal>> open_curses_terminal();

}  // namespace vtice::tui
