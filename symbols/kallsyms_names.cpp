// Finding kallsyms_num_syms, kallsyms_names and kallsyms_markers.
//
// A candidate is a u32 count N (8-aligned, followed by 4 bytes of padding)
// whose next 8-aligned bytes walk as exactly N length-prefixed entries, each
// expanding to a name that starts with an nm type letter, and whose markers
// (every 256th entry's offset) follow the walk. The search starts just below
// the token table, where every known layout puts the names, and moves out.
#include "symbols/kallsyms_internal.hpp"

namespace vtice::symbols::detail {

namespace {

constexpr std::uint32_t kMaxSymbols = 1u << 22;

struct Candidate {
	std::size_t num_syms_at;
	std::uint32_t count;
};

std::optional<Candidate> candidate_at(ByteSpan bytes, std::size_t at)
{
	auto count = read_le<std::uint32_t>(bytes, at);
	auto padding = read_le<std::uint32_t>(bytes, at + 4);
	if (!count || !padding || *count == 0 || *count > kMaxSymbols || *padding != 0)
		return std::nullopt;
	return Candidate{at, *count};
}

bool markers_match(ByteSpan bytes, std::size_t at, unsigned width, const std::vector<std::uint32_t> &marks)
{
	for (std::size_t k = 0; k < marks.size(); k++) {
		std::size_t pos = at + k * width;
		std::optional<std::uint64_t> value;
		if (width == 4)
			value = read_le<std::uint32_t>(bytes, pos);
		else
			value = read_le<std::uint64_t>(bytes, pos);
		if (!value || *value != marks[k])
			return false;
	}
	return true;
}

unsigned find_markers(ByteSpan bytes, std::size_t at, const std::vector<std::uint32_t> &marks)
{
	for (unsigned width : {4u, 8u})
		if (markers_match(bytes, at, width, marks))
			return width;
	return 0;
}

struct Search {
	ByteSpan bytes;
	const TokenTable &tokens;
	std::uint64_t base_vaddr;
	KallsymsLayout &layout;
	NamesWalk best_partial;
	std::size_t best_partial_at = KallsymsLayout::npos;
	std::uint32_t best_partial_wanted = 0;

	// True when the candidate at this offset is the names table.
	bool try_at(std::size_t at)
	{
		auto candidate = candidate_at(bytes, at);
		if (!candidate)
			return false;
		NamesWalk walk = walk_names(bytes, tokens, at + 8, candidate->count);
		if (walk.count < candidate->count) {
			if (walk.hit_end && walk.count > best_partial.count) {
				best_partial = std::move(walk);
				best_partial_at = at;
				best_partial_wanted = candidate->count;
			}
			return false;
		}
		std::size_t markers = align_to_vaddr(walk.end);
		unsigned width = find_markers(bytes, markers, walk.marks);
		if (width == 0)
			return false;
		layout.num_syms_at = at;
		layout.num_syms = candidate->count;
		layout.names = walk.start;
		layout.names_end = walk.end;
		layout.names_decoded = walk.count;
		layout.markers = markers;
		layout.marker_width = width;
		return true;
	}

	std::size_t align_to_vaddr(std::size_t offset) const
	{
		return static_cast<std::size_t>(align_up(base_vaddr + offset, 8) - base_vaddr);
	}
};

}  // namespace

NamesWalk walk_names(ByteSpan bytes, const TokenTable &tokens, std::size_t start, std::uint32_t count)
{
	NamesWalk walk;
	walk.start = start;
	std::size_t pos = start;
	walk.marks.reserve(count / 256 + 1);
	for (std::uint32_t i = 0; i < count; i++) {
		if (i % 256 == 0)
			walk.marks.push_back(static_cast<std::uint32_t>(pos - start));
		std::size_t length = 0, header = 0;
		if (!read_entry_length(bytes, pos, length, header) || bytes.size() - pos - header < length) {
			walk.hit_end = true;
			break;
		}
		if (length == 0 || !tokens.starts_with_type[bytes[pos + header]])
			break;
		pos += header + length;
		walk.count++;
	}
	walk.end = pos;
	return walk;
}

Result<void> find_names(ByteSpan bytes, const TokenTable &tokens, KallsymsLayout &layout)
{
	Search search{bytes, tokens, layout.base_vaddr, layout, {}};
	std::size_t below = search.align_to_vaddr(tokens.table);
	for (std::size_t at = below; at >= 8;) {
		at -= 8;
		if (search.try_at(at))
			return {};
	}
	for (std::size_t at = search.align_to_vaddr(tokens.index + 512); at + 8 <= bytes.size(); at += 8)
		if (search.try_at(at))
			return {};
	if (search.best_partial.count >= 256 || (search.best_partial.count > 0 && search.best_partial_wanted < 256)) {
		const NamesWalk &walk = search.best_partial;
		layout.num_syms_at = search.best_partial_at;
		layout.num_syms = search.best_partial_wanted;
		layout.names = walk.start;
		layout.names_end = walk.end;
		layout.names_decoded = walk.count;
		return {};
	}
	return make_error("kallsyms token table found but no kallsyms_names table matches it "
			  "(corrupt or unsupported layout)", tokens.table);
}

}  // namespace vtice::symbols::detail
