// A pane: one rectangle of the screen that draws itself and may take keys.
//
// As in htop and cgdb, key handlers return flags and never act on the
// screen or on other panes directly: the App redraws, quits, moves focus or
// runs a command line according to the flags, and panes that want to point
// another pane somewhere (Enter on a frame shows its code) go through
// PaneHost.
#pragma once

#include <cstdint>
#include <string>

#include "canvas.hpp"
#include "keys.hpp"
#include "layout.hpp"

namespace vtice::tui {

enum KeyFlag : unsigned {
	kIgnored = 0,
	kHandled = 1u << 0,
	kRedraw = 1u << 1,
	kQuit = 1u << 2,
	kSubmit = 1u << 3,  // the command line has a line ready (take_line)
};
using KeyFlags = unsigned;

constexpr KeyFlags kConsumed = kHandled | kRedraw;

class PaneHost {
public:
	virtual ~PaneHost() = default;
	virtual void show_code(std::uint64_t address) = 0;
	virtual void show_memory(std::uint64_t address) = 0;
	virtual void print(const std::string &line, Style style = Style::Normal) = 0;
};

class Pane {
public:
	explicit Pane(PaneId id) : id_(id) {}
	virtual ~Pane() = default;
	Pane(const Pane &) = delete;
	Pane &operator=(const Pane &) = delete;

	PaneId id() const { return id_; }
	virtual std::string title() const = 0;
	// Draws the interior (the App draws the title bar above it).
	virtual void draw(Canvas &body) = 0;
	virtual KeyFlags on_key(Key) { return kIgnored; }
	// The target stopped (or the view was reset): drop cached data.
	virtual void on_stop() {}
	// Set by the App before each draw: a cursor bar shows only where the keys go.
	void set_focused(bool focused) { focused_ = focused; }

protected:
	Style cursor_style(bool at_cursor, Style otherwise = Style::Normal) const
	{
		return at_cursor && focused_ ? Style::Cursor : otherwise;
	}

private:
	PaneId id_;
	bool focused_ = false;
};

// Moves a cursor in [0, count) by delta and keeps it visible in a window of
// `height` rows starting at *top. Shared by every list pane.
void move_cursor(int &cursor, int &top, int count, int height, int delta);
// Up/Down/PgUp/PgDn/Home/End for a list pane; kIgnored for other keys.
KeyFlags list_key(Key key, int &cursor, int &top, int count, int height);

}  // namespace vtice::tui
