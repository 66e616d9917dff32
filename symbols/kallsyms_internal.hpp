// Pieces of the kallsyms search shared by kallsyms*.cpp; not a public API.
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "symbols/kallsyms.hpp"

namespace vtice::symbols::detail {

struct TokenTable {
	std::size_t table = 0;  // offset of kallsyms_token_table
	std::size_t index = 0;  // offset of kallsyms_token_index
	std::array<std::string_view, 256> text;
	std::array<bool, 256> starts_with_type{};  // first char is an nm type letter
};

// Where a names table ended up and what it yielded on the way.
struct NamesWalk {
	std::size_t start = 0;
	std::size_t end = 0;      // one past the last entry walked
	std::uint32_t count = 0;  // entries walked
	bool hit_end = false;     // stopped because the window ended
	std::vector<std::uint32_t> marks;  // offset of every 256th entry
};

Result<TokenTable> find_token_table(ByteSpan bytes, std::uint64_t base_vaddr);

// Reads one names entry header at pos: sets length and header size (1 or 2
// bytes; 6.1 added the two-byte form for names longer than 127 tokens).
bool read_entry_length(ByteSpan bytes, std::size_t pos, std::size_t &length, std::size_t &header);

NamesWalk walk_names(ByteSpan bytes, const TokenTable &tokens, std::size_t start, std::uint32_t count);

// Locates num_syms, names and markers; fills those fields of layout.
Result<void> find_names(ByteSpan bytes, const TokenTable &tokens, KallsymsLayout &layout);

// Locates offsets/addresses and relative_base; fills addresses.
Result<void> find_addresses(ByteSpan bytes, KallsymsLayout &layout, std::vector<std::uint64_t> &addresses);

// Looks for kallsyms_seqs_of_names where 6.2 and 6.4 put it.
void find_seqs_of_names(ByteSpan bytes, KallsymsLayout &layout, const std::vector<std::string_view> &names);

}  // namespace vtice::symbols::detail
