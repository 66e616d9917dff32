#include "symbols/symbol_table.hpp"

#include <algorithm>
#include <cstring>

namespace vtice::symbols {

namespace {

// Per-cpu symbols are offsets from the per-cpu area, not kernel addresses.
bool is_kernel_half(std::uint64_t address) { return address >> 63; }

// Which of several symbols at one address to show: functions before data,
// globals before locals, vmlinux before modules.
int rank(const Symbol &symbol)
{
	int score = 0;
	if (symbol.type == 'T' || symbol.type == 't')
		score += 4;
	if (symbol.type >= 'A' && symbol.type <= 'Z')
		score += 2;
	if (symbol.module == 0)
		score += 1;
	return score;
}

// Eight bytes a step: FNV's byte-at-a-time multiply chain was a sixth of
// loading a vmlinux's 94,000 kallsyms names.
std::uint64_t hash_name(std::string_view name)
{
	constexpr std::uint64_t kMul = 0x9e3779b97f4a7c15ull;
	std::uint64_t hash = name.size() * kMul;
	std::size_t at = 0;
	for (; at + 8 <= name.size(); at += 8) {
		std::uint64_t word;
		std::memcpy(&word, name.data() + at, 8);
		hash = (hash ^ word) * kMul;
		hash ^= hash >> 29;
	}
	std::uint64_t tail = 0;
	if (at < name.size())
		std::memcpy(&tail, name.data() + at, name.size() - at);
	hash = (hash ^ tail) * kMul;
	return hash ^ (hash >> 32);
}

}  // namespace

void SymbolTable::reserve(std::size_t symbols, std::size_t name_bytes)
{
	symbols_.reserve(symbols);
	names_.reserve(name_bytes);
}

void SymbolTable::add(std::uint64_t address, char type, std::string_view name,
		      std::string_view module, std::uint64_t size)
{
	Symbol symbol;
	symbol.address = address;
	symbol.size = size;
	symbol.type = type;
	symbol.name_offset = static_cast<std::uint32_t>(names_.size());
	symbol.name_length = static_cast<std::uint32_t>(name.size());
	names_.append(name);
	if (!module.empty()) {
		auto it = std::find(modules_.begin(), modules_.end(), module);
		if (it == modules_.end())
			it = modules_.insert(modules_.end(), std::string(module));
		symbol.module = static_cast<std::uint32_t>(it - modules_.begin()) + 1;
	}
	symbols_.push_back(symbol);
	finalized_ = false;
}

void SymbolTable::assign(std::vector<Symbol> symbols, std::string names)
{
	symbols_ = std::move(symbols);
	names_ = std::move(names);
	modules_.clear();
	finalized_ = false;
}

std::string_view SymbolTable::name(const Symbol &symbol) const
{
	return std::string_view(names_).substr(symbol.name_offset, symbol.name_length);
}

std::string_view SymbolTable::module(const Symbol &symbol) const
{
	if (symbol.module == 0 || symbol.module > modules_.size())
		return {};
	return modules_[symbol.module - 1];
}

bool SymbolTable::preferred(const Symbol &a, const Symbol &b) const
{
	return rank(a) > rank(b);
}

void SymbolTable::finalize()
{
	auto by_address = [](const Symbol &a, const Symbol &b) { return a.address < b.address; };
	// kallsyms and System.map arrive sorted; only other sources pay for a sort.
	if (!std::is_sorted(symbols_.begin(), symbols_.end(), by_address))
		std::stable_sort(symbols_.begin(), symbols_.end(), by_address);
	starts_.clear();
	best_.clear();
	std::size_t slots = 16;
	while (slots < symbols_.size() * 2)
		slots *= 2;
	by_name_.assign(slots, 0);
	for (std::uint32_t i = 0; i < symbols_.size(); i++) {
		const Symbol &symbol = symbols_[i];
		if (starts_.empty() || starts_.back() != symbol.address) {
			starts_.push_back(symbol.address);
			best_.push_back(i);
		} else if (preferred(symbol, symbols_[best_.back()])) {
			best_.back() = i;
		}
		index_name(i);
	}
	finalized_ = true;
}

void SymbolTable::index_name(std::uint32_t index)
{
	std::string_view wanted = name(symbols_[index]);
	std::size_t mask = by_name_.size() - 1;
	for (std::size_t slot = hash_name(wanted) & mask;; slot = (slot + 1) & mask) {
		std::uint32_t &entry = by_name_[slot];
		if (entry == 0) {
			entry = index + 1;
			return;
		}
		if (name(symbols_[entry - 1]) == wanted) {
			if (preferred(symbols_[index], symbols_[entry - 1]))
				entry = index + 1;
			return;
		}
	}
}

std::uint64_t SymbolTable::slid(std::uint64_t recorded) const
{
	return is_kernel_half(recorded) ? recorded + static_cast<std::uint64_t>(slide_) : recorded;
}

const Symbol *SymbolTable::symbol_at(std::uint64_t address) const
{
	if (!finalized_ || starts_.empty())
		return nullptr;
	std::uint64_t recorded = is_kernel_half(address) ? address - static_cast<std::uint64_t>(slide_)
							 : address;
	auto it = std::upper_bound(starts_.begin(), starts_.end(), recorded);
	if (it == starts_.begin())
		return nullptr;
	std::size_t group = static_cast<std::size_t>(it - starts_.begin()) - 1;
	const Symbol &symbol = symbols_[best_[group]];
	// The last per-cpu offset does not extend up to kernel text.
	if (is_kernel_half(symbol.address) != is_kernel_half(recorded))
		return nullptr;
	std::uint64_t offset = recorded - symbol.address;
	if (symbol.size != 0 && offset >= symbol.size)
		return nullptr;
	// Without a size, the last symbol covers only its own address: nothing
	// says where the kernel's final object ends.
	if (symbol.size == 0 && group + 1 == starts_.size() && offset != 0)
		return nullptr;
	return &symbol;
}

std::optional<SymbolHit> SymbolTable::lookup(std::uint64_t address) const
{
	const Symbol *symbol = symbol_at(address);
	if (!symbol)
		return std::nullopt;
	SymbolHit hit;
	std::string_view mod = module(*symbol);
	hit.name = mod.empty() ? std::string(name(*symbol))
			       : std::string(mod) + ":" + std::string(name(*symbol));
	hit.start = slid(symbol->address);
	hit.offset = address - hit.start;
	return hit;
}

const Symbol *SymbolTable::find_in_module(std::string_view mod, std::string_view bare) const
{
	for (const Symbol &symbol : symbols_)
		if (name(symbol) == bare && module(symbol) == mod)
			return &symbol;
	return nullptr;
}

const Symbol *SymbolTable::find(std::string_view wanted) const
{
	if (!finalized_)
		return nullptr;
	std::size_t mask = by_name_.size() - 1;
	for (std::size_t slot = hash_name(wanted) & mask; by_name_[slot] != 0; slot = (slot + 1) & mask)
		if (name(symbols_[by_name_[slot] - 1]) == wanted)
			return &symbols_[by_name_[slot] - 1];
	std::size_t colon = wanted.find(':');
	if (colon == std::string_view::npos)
		return nullptr;
	return find_in_module(wanted.substr(0, colon), wanted.substr(colon + 1));
}

std::optional<std::uint64_t> SymbolTable::address_of(std::string_view wanted) const
{
	const Symbol *symbol = find(wanted);
	if (!symbol)
		return std::nullopt;
	return slid(symbol->address);
}

Symbolizer make_symbolizer(std::shared_ptr<const SymbolTable> table)
{
	return [table = std::move(table)](std::uint64_t address) { return table->lookup(address); };
}

}  // namespace vtice::symbols
