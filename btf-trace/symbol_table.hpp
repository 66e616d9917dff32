// Names for addresses from a trace's SYMBOLS chunk, offered as a Symbolizer.
// A symbol of size 0 reaches up to the next one.
#pragma once

#include <vector>

#include "trace_file.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice::trace {

class SymbolTable {
public:
	SymbolTable() = default;
	explicit SymbolTable(std::vector<TraceSymbol> symbols);

	std::optional<SymbolHit> lookup(std::uint64_t address) const;
	// The returned function refers to this table: keep the table alive.
	Symbolizer symbolizer() const;
	bool empty() const { return symbols_.empty(); }

private:
	std::vector<TraceSymbol> symbols_;  // sorted by address
};

}  // namespace vtice::trace
