#include "keys.hpp"

namespace vtice::tui {

static const char *special_key_name(Key key)
{
	switch (key) {
	case kKeyNone: return "(none)";
	case kKeyCtrlA: return "Ctrl-A";
	case kKeyCtrlC: return "Ctrl-C";
	case kKeyCtrlE: return "Ctrl-E";
	case kKeyCtrlL: return "Ctrl-L";
	case kKeyCtrlU: return "Ctrl-U";
	case kKeyTab: return "Tab";
	case kKeyEnter: return "Enter";
	case kKeyEscape: return "Esc";
	case kKeyUp: return "Up";
	case kKeyDown: return "Down";
	case kKeyLeft: return "Left";
	case kKeyRight: return "Right";
	case kKeyPageUp: return "PgUp";
	case kKeyPageDown: return "PgDn";
	case kKeyHome: return "Home";
	case kKeyEnd: return "End";
	case kKeyBackspace: return "Backspace";
	case kKeyDelete: return "Delete";
	case kKeyBackTab: return "Shift-Tab";
	case kKeyResize: return "Resize";
	default: return nullptr;
	}
}

std::string key_name(Key key)
{
	if (const char *name = special_key_name(key))
		return name;
	if (key == ' ')
		return "Space";
	if (is_printable(key))
		return std::string(1, static_cast<char>(key));
	// xterm sends F13..F24 for Shift-F1..Shift-F12 (terminfo kf13..kf24).
	if (key > kKeyFunction + 12 && key <= kKeyFunction + 24)
		return "Shift-F" + std::to_string(key - kKeyFunction - 12);
	if (key > kKeyFunction && key <= kKeyFunction + 12)
		return "F" + std::to_string(key - kKeyFunction);
	return "key " + std::to_string(key);
}

}  // namespace vtice::tui
