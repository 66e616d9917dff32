// Finding kallsyms_token_table and kallsyms_token_index by their content.
//
// The index is 256 ascending u16 offsets starting at 0, each step the length
// of a token plus its NUL. The table is the 256 strings those offsets point
// into, ending (after up to 7 bytes of alignment padding) where the index
// begins. Both must agree exactly, which random data practically never does.
#include <cctype>

#include "symbols/kallsyms_internal.hpp"

namespace vtice::symbols::detail {

namespace {

constexpr std::size_t kIndexBytes = 256 * 2;
constexpr unsigned kMaxTokenLength = 255;
constexpr unsigned kMinTokens = 32;

bool is_type_letter(char c)
{
	return std::isalpha(static_cast<unsigned char>(c)) || c == '?';
}

// Small kernels leave unused codes as empty tokens, so a step of 1 is legal;
// enough real tokens must remain for the table to mean anything.
bool plausible_index(const std::uint8_t *at)
{
	if (load_le<std::uint16_t>(at) != 0)
		return false;
	std::uint16_t previous = 0;
	unsigned nonempty = 0;
	for (unsigned i = 1; i < 256; i++) {
		std::uint16_t offset = load_le<std::uint16_t>(at + 2 * i);
		if (offset <= previous || offset > previous + 1 + kMaxTokenLength)
			return false;
		nonempty += offset - previous > 1;
		previous = offset;
	}
	return nonempty >= kMinTokens;
}

// Checks the table that would start at offset table against the index.
bool table_matches(ByteSpan bytes, std::size_t table, std::size_t index_at, std::size_t end)
{
	for (unsigned i = 0; i < 256; i++) {
		std::size_t from = table + load_le<std::uint16_t>(bytes.data() + index_at + 2 * i);
		std::size_t to = i == 255 ? end
					  : table + load_le<std::uint16_t>(bytes.data() + index_at + 2 * i + 2) - 1;
		if (from > to || bytes[to] != 0)
			return false;
		for (std::size_t at = from; at < to; at++)
			if (bytes[at] < 0x20 || bytes[at] > 0x7e)
				return false;
	}
	return true;
}

// Given a plausible index at offset index_at, finds the table that ends just
// before it. The last token's NUL is followed by 0-7 zero bytes of padding;
// each possible split is tried, since the last token may itself be empty.
std::optional<std::size_t> table_before(ByteSpan bytes, std::size_t index_at)
{
	std::uint16_t last = load_le<std::uint16_t>(bytes.data() + index_at + 2 * 255);
	for (std::size_t pad = 0; pad < 8 && pad < index_at; pad++) {
		std::size_t end = index_at - pad - 1;  // the last token's NUL
		if (bytes[end] != 0)
			break;
		std::size_t start = end;
		while (start > 0 && bytes[start - 1] != 0 && end - start <= kMaxTokenLength)
			start--;
		if (start < last)
			continue;
		if (table_matches(bytes, start - last, index_at, end))
			return start - last;
	}
	return std::nullopt;
}

TokenTable make_tokens(ByteSpan bytes, std::size_t table, std::size_t index)
{
	TokenTable tokens;
	tokens.table = table;
	tokens.index = index;
	for (unsigned i = 0; i < 256; i++) {
		const char *text = reinterpret_cast<const char *>(bytes.data()) + table +
				   load_le<std::uint16_t>(bytes.data() + index + 2 * i);
		tokens.text[i] = std::string_view(text);
		tokens.starts_with_type[i] = is_type_letter(text[0]);
	}
	return tokens;
}

std::optional<TokenTable> scan(ByteSpan bytes, std::uint64_t base_vaddr, std::size_t step)
{
	if (bytes.size() < kIndexBytes)
		return std::nullopt;
	std::size_t first = static_cast<std::size_t>(align_up(base_vaddr, step) - base_vaddr);
	for (std::size_t at = first; at + kIndexBytes <= bytes.size(); at += step) {
		// One load rejects nearly every position: index[0] == 0 and
		// 0 < index[1] < index[2].
		std::uint64_t head = load_le<std::uint64_t>(bytes.data() + at);
		std::uint16_t first = static_cast<std::uint16_t>(head >> 16), second = static_cast<std::uint16_t>(head >> 32);
		if ((head & 0xffff) != 0 || first == 0 || second <= first || !plausible_index(bytes.data() + at))
			continue;
		if (auto table = table_before(bytes, at))
			return make_tokens(bytes, *table, at);
	}
	return std::nullopt;
}

}  // namespace

Result<TokenTable> find_token_table(ByteSpan bytes, std::uint64_t base_vaddr)
{
	// scripts/kallsyms.c aligns every table to 8; fall back to 2 for
	// windows that start at an odd place or builds that align less.
	if (auto tokens = scan(bytes, base_vaddr, 8))
		return *tokens;
	if (auto tokens = scan(bytes, base_vaddr, 2))
		return *tokens;
	return make_error("no kallsyms token table in " + std::to_string(bytes.size()) +
			  " bytes (not a kernel image, or built without CONFIG_KALLSYMS)");
}

bool read_entry_length(ByteSpan bytes, std::size_t pos, std::size_t &length, std::size_t &header)
{
	if (pos >= bytes.size())
		return false;
	std::uint8_t first = bytes[pos];
	if (!(first & 0x80)) {
		length = first;
		header = 1;
		return true;
	}
	if (pos + 1 >= bytes.size())
		return false;
	length = (first & 0x7f) | (static_cast<std::size_t>(bytes[pos + 1]) << 7);
	header = 2;
	return true;
}

}  // namespace vtice::symbols::detail
