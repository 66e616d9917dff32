// The curses implementation of Terminal: the only file that includes curses.
#include "terminal.hpp"

#include <curses.h>
#include <unistd.h>

#include <array>
#include <clocale>

namespace vtice::tui {
namespace {

struct StyleLook {
	short fg, bg;
	attr_t attrs;
};

// Index = Style. Colour pair n+1 belongs to style n; attrs alone carry the
// meaning on monochrome terminals.
constexpr std::array<StyleLook, static_cast<int>(Style::Count)> kLooks = {{
	{-1, -1, A_NORMAL},                     // Normal
	{COLOR_BLACK, COLOR_CYAN, A_NORMAL},    // Title
	{COLOR_BLACK, COLOR_YELLOW, A_BOLD},    // TitleFocused
	{COLOR_WHITE, COLOR_BLUE, A_BOLD},      // Status
	{COLOR_RED, -1, A_BOLD},                // Changed
	{COLOR_BLACK, COLOR_GREEN, A_BOLD},     // Current
	{COLOR_RED, -1, A_NORMAL},              // Breakpoint
	{-1, -1, A_REVERSE},                    // Cursor
	{COLOR_CYAN, -1, A_NORMAL},             // Dim
	{COLOR_RED, -1, A_BOLD},                // Error
	{COLOR_YELLOW, -1, A_BOLD},             // Prompt
}};

Key translate(int ch)
{
	if (ch >= KEY_F(1) && ch <= KEY_F(24))
		return key_f(ch - KEY_F(0));
	switch (ch) {
	case ERR: return kKeyNone;
	case KEY_UP: return kKeyUp;
	case KEY_DOWN: return kKeyDown;
	case KEY_LEFT: return kKeyLeft;
	case KEY_RIGHT: return kKeyRight;
	case KEY_PPAGE: return kKeyPageUp;
	case KEY_NPAGE: return kKeyPageDown;
	case KEY_HOME: return kKeyHome;
	case KEY_END: return kKeyEnd;
	case KEY_BACKSPACE: case 0x7f: case 0x08: return kKeyBackspace;
	case KEY_DC: return kKeyDelete;
	case KEY_BTAB: return kKeyBackTab;
	case KEY_RESIZE: return kKeyResize;
	case KEY_ENTER: case '\r': case '\n': return kKeyEnter;
	default: return ch;
	}
}

class CursesTerminal final : public Terminal {
public:
	explicit CursesTerminal(SCREEN *screen) : screen_(screen)
	{
		set_escdelay(25);  // a lone Esc opens help; don't make it wait a second
		raw();  // Ctrl-C is a key that interrupts the target, not a signal
		noecho();
		nonl();
		keypad(stdscr, TRUE);
		// Shift-F11/F12 as xterm-compatible terminals send them, whatever
		// $TERM's terminfo says (screen's has no kf23).
		define_key("\033[23;2~", KEY_F(23));
		define_key("\033[24;2~", KEY_F(24));
		setup_colors();
	}
	~CursesTerminal() override
	{
		endwin();
		delscreen(screen_);
	}

	Size size() const override
	{
		int rows = 0, cols = 0;
		getmaxyx(stdscr, rows, cols);
		return {rows, cols};
	}

	void put(int row, int col, std::string_view text, Style style) override
	{
		attr_t attrs = look(style);
		attron(attrs);
		mvaddnstr(row, col, text.data(), static_cast<int>(text.size()));
		attroff(attrs);
	}

	void clear() override { erase(); }
	void set_cursor(std::optional<std::pair<int, int>> at) override { cursor_ = at; }

	void flush() override
	{
		if (cursor_) {
			curs_set(1);
			move(cursor_->first, cursor_->second);
		} else {
			curs_set(0);
		}
		refresh();
	}

	Key read_key(int timeout_ms) override
	{
		timeout(timeout_ms);
		return translate(getch());
	}

	void refresh_size() override
	{
		// ncurses has already resized stdscr when it reported KEY_RESIZE;
		// clearok forces a full repaint so no stale cells survive.
		clearok(curscr, TRUE);
	}

private:
	void setup_colors()
	{
		if (!has_colors())
			return;
		colors_ = true;
		start_color();
		use_default_colors();
		for (std::size_t i = 1; i < kLooks.size(); ++i)
			init_pair(static_cast<short>(i + 1), kLooks[i].fg, kLooks[i].bg);
	}

	attr_t look(Style style) const
	{
		auto index = static_cast<std::size_t>(style);
		if (index == 0 || index >= kLooks.size())
			return A_NORMAL;
		if (!colors_)
			return kLooks[index].attrs | A_REVERSE * (index <= 3);
		return kLooks[index].attrs | COLOR_PAIR(index + 1);
	}

	SCREEN *screen_;
	bool colors_ = false;
	std::optional<std::pair<int, int>> cursor_;
};

}  // namespace

Result<std::unique_ptr<Terminal>> open_curses_terminal()
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return make_error("the TUI needs a terminal on stdin and stdout (use --batch for scripts)");
	std::setlocale(LC_ALL, "");
	// newterm, unlike initscr, reports an unknown $TERM instead of exiting.
	SCREEN *screen = newterm(nullptr, stdout, stdin);
	if (!screen)
		return make_error("cannot initialise the terminal (is $TERM set to a known type?)");
	std::unique_ptr<Terminal> terminal = std::make_unique<CursesTerminal>(screen);
	return terminal;
}

}  // namespace vtice::tui
