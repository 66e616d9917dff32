// Decoding the located kallsyms tables into a SymbolTable.
#include "symbols/kallsyms.hpp"

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

// Expands every entry; names keep the type letter as their first character,
// as the kernel stores them, so the views stay in the caller's buffer.
void expand_names(ByteSpan bytes, const TokenTable &tokens, const KallsymsLayout &layout,
		  std::string &pool, std::vector<std::uint32_t> &ends)
{
	std::size_t pos = layout.names;
	ends.reserve(layout.names_decoded);
	for (std::uint32_t i = 0; i < layout.names_decoded; i++) {
		std::size_t length = 0, header = 0;
		read_entry_length(bytes, pos, length, header);  // validated by walk_names
		const std::uint8_t *at = bytes.data() + pos + header;
		for (std::size_t k = 0; k < length; k++)
			pool.append(tokens.text[at[k]]);
		ends.push_back(static_cast<std::uint32_t>(pool.size()));
		pos += header + length;
	}
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
	std::vector<std::uint32_t> ends;
	pool.reserve((layout.names_end - layout.names) * 3);
	expand_names(bytes, *tokens, layout, pool, ends);
	std::vector<std::string_view> names(ends.size());
	out.table.reserve(ends.size(), pool.size());
	for (std::size_t i = 0, begin = 0; i < ends.size(); begin = ends[i++]) {
		std::string_view full(pool.data() + begin, ends[i] - begin);
		names[i] = full.substr(1);
		out.table.add(addresses[i], full[0], names[i]);
	}
	find_seqs_of_names(bytes, layout, names);
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

}  // namespace vtice::symbols
