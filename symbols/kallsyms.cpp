// Decoding the located kallsyms tables into a SymbolTable.
#include "symbols/kallsyms.hpp"

#include <algorithm>
#include <cstring>

#include "symbols/kallsyms_internal.hpp"

namespace vtice::symbols {

using namespace detail;

std::string KallsymsLayout::style() const
{
	if (addresses != npos && token_index != npos && addresses > token_index)
		return "6.4-style";
	if (seqs_of_names != npos)
		return "6.2-style";
	return "classic";
}

namespace {

// The bytes expand_names() writes: one pass over the entries, summing
// token lengths, so the pool is allocated once and no page is touched twice.
std::size_t expanded_size(ByteSpan bytes, const TokenTable &tokens, const KallsymsLayout &layout)
{
	std::size_t token_length[256];
	for (unsigned c = 0; c < 256; c++)
		token_length[c] = tokens.text[c].size();
	std::size_t pos = layout.names, total = 0;
	for (std::uint32_t i = 0; i < layout.names_decoded; i++) {
		std::size_t length = 0, header = 0;
		read_entry_length(bytes, pos, length, header);  // validated by walk_names
		const std::uint8_t *at = bytes.data() + pos + header;
		for (std::size_t k = 0; k < length; k++)
			total += token_length[at[k]];
		pos += header + length;
	}
	return total;
}

// Expands every entry into one pool; each name keeps its type letter in
// front, as the kernel stores it, and the symbol points just past it.
void expand_names(ByteSpan bytes, const TokenTable &tokens, const KallsymsLayout &layout,
		  const std::vector<std::uint64_t> &addresses, std::vector<Symbol> &symbols, std::string &pool)
{
	// Most tokens are a few bytes: copying a fixed 16 from a padded copy is
	// cheaper than a memcpy call per token; the pool has that much slack.
	constexpr std::size_t kPad = 16;
	char padded[256][kPad] = {};
	for (unsigned c = 0; c < 256; c++)
		std::memcpy(padded[c], tokens.text[c].data(), std::min(kPad, tokens.text[c].size()));
	std::size_t pos = layout.names, used = 0;
	pool.resize(expanded_size(bytes, tokens, layout) + kPad);
	symbols.resize(layout.names_decoded);
	for (std::uint32_t i = 0; i < layout.names_decoded; i++) {
		std::size_t length = 0, header = 0;
		read_entry_length(bytes, pos, length, header);
		const std::uint8_t *at = bytes.data() + pos + header;
		std::size_t begin = used;
		for (std::size_t k = 0; k < length; k++) {
			std::string_view token = tokens.text[at[k]];
			if (token.size() <= kPad)
				std::memcpy(pool.data() + used, padded[at[k]], kPad);
			else
				std::memcpy(pool.data() + used, token.data(), token.size());
			used += token.size();
		}
		Symbol &symbol = symbols[i];
		symbol.address = addresses[i];
		bool typed = used > begin;  // walk_names saw a type letter first
		symbol.type = typed ? pool[begin] : '?';
		symbol.name_offset = static_cast<std::uint32_t>(typed ? begin + 1 : begin);
		symbol.name_length = static_cast<std::uint32_t>(typed ? used - begin - 1 : 0);
		pos += header + length;
	}
	pool.resize(used);
}

}  // namespace

Result<KallsymsRecovery> recover_kallsyms_tables(ByteSpan bytes, std::uint64_t base_vaddr)
{
	KallsymsRecovery out;
	KallsymsLayout &layout = out.layout;
	layout.base_vaddr = base_vaddr;
	auto tokens = find_token_table(bytes, base_vaddr);
	if (!tokens)
		return tokens.error();
	layout.token_table = tokens->table;
	layout.token_index = tokens->index;
	if (auto names = find_names(bytes, *tokens, layout); !names)
		return names.error();
	std::vector<std::uint64_t> addresses;
	if (auto found = find_addresses(bytes, layout, addresses); !found)
		return found.error();

	std::string pool;
	std::vector<Symbol> symbols;
	expand_names(bytes, *tokens, layout, addresses, symbols, pool);
	std::vector<std::string_view> names(symbols.size());
	for (std::size_t i = 0; i < symbols.size(); i++)
		names[i] = std::string_view(pool).substr(symbols[i].name_offset, symbols[i].name_length);
	find_seqs_of_names(bytes, layout, names);
	out.table.assign(std::move(symbols), std::move(pool));
	out.table.finalize();
	if (layout.names_decoded < layout.num_syms)
		out.partial = make_error("kallsyms_names is cut short: decoded " +
						 std::to_string(layout.names_decoded) + " of " +
						 std::to_string(layout.num_syms) + " symbols",
					 layout.names_end);
	return out;
}

Result<SymbolTable> recover_kallsyms(ByteSpan bytes, std::uint64_t base_vaddr)
{
	auto recovered = recover_kallsyms_tables(bytes, base_vaddr);
	if (!recovered)
		return recovered.error();
	return std::move(recovered->table);
}

Result<MemoryRecovery> recover_kallsyms_from_memory(const MemoryReader &read, std::uint64_t start,
						    std::uint64_t length)
{
	constexpr std::uint64_t kPage = 4096;
	constexpr std::uint64_t kMaxWindow = 1ull << 30;
	if (length == 0 || length > kMaxWindow || start + length < start)
		return make_error("memory window of " + std::to_string(length) + " bytes is empty or too large");
	MemoryRecovery out;
	Bytes window(length);
	for (std::uint64_t at = 0; at < length;) {
		// Page-sized reads that stop at page boundaries, so one bad page
		// costs only itself.
		std::uint64_t chunk = std::min(length - at, kPage - (start + at) % kPage);
		if (!read(start + at, std::span(window.data() + at, chunk))) {
			std::fill_n(window.data() + at, chunk, 0);
			out.unreadable_pages++;
		}
		at += chunk;
	}
	auto recovered = recover_kallsyms_tables(window, start);
	if (!recovered) {
		Error error = recovered.error();
		if (out.unreadable_pages)
			error.message += " (" + std::to_string(out.unreadable_pages) + " pages of the window were unreadable)";
		return error;
	}
	out.recovery = std::move(*recovered);
	return out;
}

}  // namespace vtice::symbols
