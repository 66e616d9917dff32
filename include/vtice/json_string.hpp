// A JSON string literal of any bytes: quotes and backslashes escaped, and
// every byte outside printable ASCII as \u00NN, so hostile text (symbol
// names, kernel strings) stays one well-formed value.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace vtice {

inline std::string json_string(std::string_view text)
{
	std::string out = "\"";
	for (unsigned char c : text) {
		if (c == '"' || c == '\\') {
			out += '\\';
			out += static_cast<char>(c);
		} else if (c < 0x20 || c >= 0x7f) {
			char escaped[8];
			std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
			out += escaped;
		} else {
			out += static_cast<char>(c);
		}
	}
	return out + "\"";
}

}  // namespace vtice
