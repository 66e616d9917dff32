// The one escaper for text that comes from a target or a file: symbol
// names, a kernel's banner and log, stub output, task names, paths.
//
// A kernel under analysis is hostile by assumption, so none of its bytes
// may drive the analyst's terminal: every byte outside printable ASCII
// (C0 controls, DEL, and every byte from 0x80 up, which covers the C1
// controls whether a terminal reads them raw or as UTF-8) becomes \xNN,
// as strace prints strings. A backslash stays as it is. Newline and tab
// are kept where the text is laid out in lines (Layout::Lines), and
// escaped inside one field (Layout::Field).
#pragma once

#include <string>
#include <string_view>

namespace vtice {

enum class Layout { Lines, Field };

inline bool printable_ascii(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

inline bool needs_escape(std::string_view text, Layout layout = Layout::Lines)
{
	for (unsigned char c : text)
		if (!printable_ascii(c) && !(layout == Layout::Lines && (c == '\n' || c == '\t')))
			return true;
	return false;
}

inline std::string escape_text(std::string_view text, Layout layout = Layout::Lines)
{
	if (!needs_escape(text, layout))
		return std::string(text);
	static const char kDigits[] = "0123456789abcdef";
	std::string out;
	out.reserve(text.size() + 16);
	for (unsigned char c : text) {
		if (printable_ascii(c) || (layout == Layout::Lines && (c == '\n' || c == '\t'))) {
			out += static_cast<char>(c);
			continue;
		}
		out += "\\x";
		out += kDigits[c >> 4];
		out += kDigits[c & 15];
	}
	return out;
}

}  // namespace vtice
