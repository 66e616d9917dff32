// System.map and /proc/kallsyms text: "ADDRESS TYPE NAME[\t[MODULE]]" lines.
#pragma once

#include <optional>
#include <string_view>

#include "symbols/bytes.hpp"
#include "symbols/symbol_table.hpp"

namespace vtice::symbols {

enum class TextFlavor { system_map, kallsyms };

struct TextSymbols {
	SymbolTable table;
	TextFlavor flavor = TextFlavor::system_map;  // kallsyms when a [module] suffix was seen
	std::size_t lines = 0;
	std::optional<Error> partial;  // the first bad line; the symbols before it are kept
};

// True when the first line has the shape of a symbol line.
bool looks_like_symbol_text(ByteSpan bytes);
Result<TextSymbols> parse_symbol_text(std::string_view text);

}  // namespace vtice::symbols
