// The seam between code that prints addresses and the symbol tables.
//
// The disassembler and the trace renderers take a Symbolizer rather than a
// symbols/ type, so they neither depend on how symbols were loaded nor need a
// real table in their tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include "vtice/escape.hpp"

namespace vtice {

struct SymbolHit {
	std::string name;     // "do_sys_openat2", or "module:name"
	std::uint64_t start;  // address of the symbol (slide applied)
	std::uint64_t offset; // address - start
};

// Returns the symbol covering an address, or nothing.
using Symbolizer = std::function<std::optional<SymbolHit>(std::uint64_t address)>;

// A symbol name as it may reach a terminal or a text file: names come from
// files and guest memory (vtice/escape.hpp).
inline std::string printable_symbol(const std::string &name)
{
	return escape_text(name, Layout::Field);
}

// "name+0x1a", "name", or "0xffffffff81000000" when nothing covers it.
inline std::string format_address(std::uint64_t address, const Symbolizer &symbolize)
{
	char text[32];
	std::optional<SymbolHit> hit;
	if (symbolize)
		hit = symbolize(address);
	// A nameless symbol (a damaged table) would print as nothing at all.
	if (!hit || hit->name.empty()) {
		std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(address));
		return text;
	}
	if (hit->offset == 0)
		return printable_symbol(hit->name);
	std::snprintf(text, sizeof(text), "+0x%llx", static_cast<unsigned long long>(hit->offset));
	return printable_symbol(hit->name) + text;
}

}  // namespace vtice
