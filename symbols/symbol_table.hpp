// A kernel's symbols, wherever they came from: address -> name+offset by
// binary search over sorted starts, name -> address by hash.
//
// Addresses are stored as the source recorded them (link-time addresses for
// an image, run-time ones for /proc/kallsyms or a live dump). A KASLR slide
// set on the table is added to every kernel-half address on the way out and
// subtracted on the way in; per-cpu offsets (small absolute values) are not
// slid, as the kernel does not relocate them either.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vtice/symbolizer.hpp"

namespace vtice::symbols {

struct Symbol {
	std::uint64_t address = 0;
	std::uint64_t size = 0;       // 0 when the source does not say (kallsyms, System.map)
	std::uint32_t name_offset = 0;  // into SymbolTable's name pool
	std::uint32_t name_length = 0;
	std::uint32_t module = 0;     // 0 = vmlinux, else index into modules() + 1
	char type = '?';              // nm letter: T t D d B b R r A W ...
};

class SymbolTable {
public:
	void add(std::uint64_t address, char type, std::string_view name,
		 std::string_view module = {}, std::uint64_t size = 0);
	// Takes symbols whose name_offset/name_length point into names, in one
	// move (the kallsyms decoder builds both directly).
	void assign(std::vector<Symbol> symbols, std::string names);
	// Sorts and indexes; call once after the last add() and before lookups.
	void finalize();
	void reserve(std::size_t symbols, std::size_t name_bytes);

	std::size_t size() const { return symbols_.size(); }
	bool empty() const { return symbols_.empty(); }
	std::span<const Symbol> symbols() const { return symbols_; }
	std::string_view name(const Symbol &symbol) const;
	std::string_view module(const Symbol &symbol) const;

	void set_slide(std::int64_t slide) { slide_ = slide; }
	std::int64_t slide() const { return slide_; }
	std::uint64_t slid(std::uint64_t recorded) const;

	// The symbol covering a (slid) address: the last start <= address, up to
	// the next start or the symbol's size when known.
	std::optional<SymbolHit> lookup(std::uint64_t address) const;
	const Symbol *symbol_at(std::uint64_t address) const;
	// "name" or "module:name"; the (slid) address of the preferred match.
	std::optional<std::uint64_t> address_of(std::string_view name) const;
	const Symbol *find(std::string_view name) const;

private:
	bool preferred(const Symbol &a, const Symbol &b) const;
	const Symbol *find_in_module(std::string_view module, std::string_view name) const;
	void index_name(std::uint32_t index);

	std::vector<Symbol> symbols_;
	std::string names_;
	std::vector<std::string> modules_;
	std::vector<std::uint64_t> starts_;  // distinct starts, ascending
	std::vector<std::uint32_t> best_;    // symbol index chosen for each start
	// Open-addressing hash of symbol index + 1 (0 = empty), keyed by name.
	// Indices rather than string_views keep copies and moves of the table safe.
	std::vector<std::uint32_t> by_name_;
	std::int64_t slide_ = 0;
	bool finalized_ = false;
};

// A Symbolizer that keeps the table alive for as long as it is used.
Symbolizer make_symbolizer(std::shared_ptr<const SymbolTable> table);

}  // namespace vtice::symbols
