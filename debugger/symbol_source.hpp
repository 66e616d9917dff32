// The debugger's view of symbols: name -> address and address -> name.
//
// The symbols/ library (kallsyms recovery, ELF, System.map) is adapted to this
// interface in one place (debugger/symbols_adapter.*), so the engine and its
// tests do not depend on how the table was obtained.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vtice/result.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice::dbg {

class SymbolSource {
public:
	virtual ~SymbolSource() = default;
	virtual std::optional<std::uint64_t> lookup(std::string_view name) const = 0;
	// Every symbol of that name (a static function may have many copies),
	// lookup()'s choice first.
	virtual std::vector<std::uint64_t> lookup_all(std::string_view name) const
	{
		auto one = lookup(name);
		return one ? std::vector<std::uint64_t>{*one} : std::vector<std::uint64_t>{};
	}
	virtual std::optional<SymbolHit> symbolize(std::uint64_t address) const = 0;
	virtual std::size_t size() const = 0;
	virtual std::string origin() const = 0;  // "kallsyms from guest memory", "System.map FILE"
};

// A sorted table of (address, name): what /proc/kallsyms and System.map hold.
class SymbolList final : public SymbolSource {
public:
	struct Entry {
		std::uint64_t address;
		std::string name;
		char type;  // nm type letter, 't', 'T', 'd', ...
	};

	SymbolList(std::vector<Entry> entries, std::string origin, std::uint64_t slide = 0);

	std::optional<std::uint64_t> lookup(std::string_view name) const override;
	std::vector<std::uint64_t> lookup_all(std::string_view name) const override;
	std::optional<SymbolHit> symbolize(std::uint64_t address) const override;
	// The first symbol's address above address: where the code at address
	// ends at the latest (kallsyms gives no sizes).
	std::optional<std::uint64_t> next_start(std::uint64_t address) const;
	// Whether the symbol symbolize() names for address is code ('t'/'T').
	bool text_at(std::uint64_t address) const;
	std::size_t size() const override { return entries_.size(); }
	const std::vector<Entry> &entries() const { return entries_; }	// by address
	std::string origin() const override { return origin_; }
	// The same table with a KASLR slide added to every kernel address.
	std::unique_ptr<SymbolList> slid(std::int64_t slide) const;
	// This table and more entries (at their addresses already), as origin.
	std::unique_ptr<SymbolList> with(const std::vector<Entry> &more, std::string origin) const;
	// The kernel's own banner ("Linux version ...") as the image holds it at
	// linux_banner, when the symbols came from an image: the identity the
	// running kernel must show at the same symbol.
	const std::string &image_banner() const { return image_banner_; }
	void set_image_banner(std::string banner) { image_banner_ = std::move(banner); }

private:
	// The first entry whose address is above address (or the end).
	std::vector<Entry>::const_iterator first_after(std::uint64_t address) const;
	// The entry symbolize() names address by (a text alias first), or null.
	const Entry *covering(std::uint64_t address) const;

	std::vector<Entry> entries_;  // sorted by address, slide applied
	std::vector<std::size_t> by_name_;
	std::string origin_;
	std::string image_banner_;
};

// Parses "ffffffff81000000 T _text" lines (/proc/kallsyms, System.map). Lines
// that do not parse are an error naming the line; module suffixes "[mod]" are kept.
Result<std::unique_ptr<SymbolList>> parse_kallsyms_text(std::string_view text, std::string origin);

Symbolizer make_symbolizer(const SymbolSource *symbols);

}  // namespace vtice::dbg
