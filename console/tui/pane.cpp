#include "pane.hpp"

#include <algorithm>

namespace vtice::tui {

void move_cursor(int &cursor, int &top, int count, int height, int delta)
{
	if (count <= 0) {
		cursor = top = 0;
		return;
	}
	cursor = std::clamp(cursor + delta, 0, count - 1);
	height = std::max(height, 1);
	if (cursor < top)
		top = cursor;
	else if (cursor >= top + height)
		top = cursor - height + 1;
	top = std::clamp(top, 0, std::max(0, count - 1));
}

KeyFlags list_key(Key key, int &cursor, int &top, int count, int height)
{
	int page = std::max(height - 1, 1);
	switch (key) {
	case kKeyUp: move_cursor(cursor, top, count, height, -1); break;
	case kKeyDown: move_cursor(cursor, top, count, height, 1); break;
	case kKeyPageUp: move_cursor(cursor, top, count, height, -page); break;
	case kKeyPageDown: move_cursor(cursor, top, count, height, page); break;
	case kKeyHome: move_cursor(cursor, top, count, height, -count); break;
	case kKeyEnd: move_cursor(cursor, top, count, height, count); break;
	default: return kIgnored;
	}
	return kConsumed;
}

}  // namespace vtice::tui
