#include "symbol_table.hpp"

#include <algorithm>

namespace vtice::trace {

SymbolTable::SymbolTable(std::vector<TraceSymbol> symbols) : symbols_(std::move(symbols))
{
	std::stable_sort(symbols_.begin(), symbols_.end(),
			 [](const TraceSymbol &a, const TraceSymbol &b) { return a.address < b.address; });
}

std::optional<SymbolHit> SymbolTable::lookup(std::uint64_t address) const
{
	auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
				   [](std::uint64_t a, const TraceSymbol &s) { return a < s.address; });
	if (it == symbols_.begin())
		return std::nullopt;
	auto next = it;
	--it;
	std::uint64_t offset = address - it->address;
	bool inside = it->size ? offset < it->size : (next == symbols_.end() || address < next->address);
	if (!inside)
		return std::nullopt;
	return SymbolHit{it->name, it->address, offset};
}

Symbolizer SymbolTable::symbolizer() const
{
	return [this](std::uint64_t address) { return lookup(address); };
}

}  // namespace vtice::trace
