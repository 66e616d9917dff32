// Key codes the TUI understands, independent of curses.
//
// The terminal wrapper translates whatever the terminal sends (curses KEY_*
// codes, raw control bytes) into these, so panes, the command line and the
// unit tests never see a curses constant. Printable characters are their own
// code (< 0x100); everything else lives above 0x10000.
#pragma once

#include <string>

namespace vtice::tui {

using Key = int;

enum : Key {
	kKeyNone = -1,  // read timed out
	kKeyCtrlA = 0x01,
	kKeyCtrlC = 0x03,
	kKeyCtrlE = 0x05,
	kKeyCtrlL = 0x0c,
	kKeyCtrlU = 0x15,
	kKeyTab = 0x09,
	kKeyEnter = 0x0a,
	kKeyEscape = 0x1b,
	kKeySpecial = 0x10000,
	kKeyUp,
	kKeyDown,
	kKeyLeft,
	kKeyRight,
	kKeyPageUp,
	kKeyPageDown,
	kKeyHome,
	kKeyEnd,
	kKeyBackspace,
	kKeyDelete,
	kKeyBackTab,
	kKeyResize,
	kKeyFunction = 0x10100,  // kKeyFunction + n is Fn
};

constexpr Key key_f(int n) { return kKeyFunction + n; }
// xterm's F13..F24, terminfo kf13..kf24: what Shift-F1..Shift-F12 send.
constexpr Key key_shift_f(int n) { return key_f(n + 12); }

inline bool is_printable(Key key) { return key >= 0x20 && key < 0x7f; }

// "F5", "Shift-F11", "Tab", "Ctrl-C", "q": for the help pane and test logs.
std::string key_name(Key key);

}  // namespace vtice::tui
