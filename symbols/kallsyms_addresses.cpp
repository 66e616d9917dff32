// Finding kallsyms_offsets (or kallsyms_addresses) and kallsyms_relative_base,
// and kallsyms_seqs_of_names.
//
// The address array sits either just before num_syms (classic and 6.2
// orders) or just after token_index (6.4 order). A position and an encoding
// are accepted only when they decode to a sorted array, since
// scripts/kallsyms.c sorts symbols by address before emitting them.
#include <algorithm>

#include "symbols/kallsyms_internal.hpp"

namespace vtice::symbols::detail {

namespace {

using Mode = KallsymsAddressMode;

struct Placement {
	std::size_t addresses;
	std::size_t relative_base_at;  // npos for Mode::absolute
};

bool decode(ByteSpan bytes, const KallsymsLayout &layout, Mode mode, const Placement &where,
	    std::vector<std::uint64_t> &out)
{
	std::uint32_t count = layout.num_syms;
	std::size_t width = mode == Mode::absolute ? 8 : 4;
	if (where.addresses > bytes.size() || (bytes.size() - where.addresses) / width < count)
		return false;
	std::uint64_t base = 0;
	if (mode != Mode::absolute) {
		auto value = read_le<std::uint64_t>(bytes, where.relative_base_at);
		if (!value || *value == 0)
			return false;
		base = *value;
	}
	out.resize(count);
	bool any_negative = false;
	const std::uint8_t *at = bytes.data() + where.addresses;
	for (std::uint32_t i = 0; i < count; i++, at += width) {
		std::uint64_t address;
		if (mode == Mode::absolute) {
			address = load_le<std::uint64_t>(at);
		} else if (mode == Mode::relative) {
			address = base + load_le<std::uint32_t>(at);
		} else {
			std::int32_t offset = load_le<std::int32_t>(at);
			any_negative |= offset < 0;
			address = offset >= 0 ? static_cast<std::uint64_t>(offset)
					      : base - 1 - static_cast<std::uint64_t>(static_cast<std::int64_t>(offset));
		}
		if (i > 0 && address < out[i - 1])
			return false;
		out[i] = address;
	}
	// All-positive offsets decode the same either way; the kernel would have
	// used the plain relative encoding for them.
	if (mode == Mode::absolute_percpu && !any_negative)
		return false;
	return count < 2 || out.front() != out.back();
}

std::vector<Placement> placements(const KallsymsLayout &layout, Mode mode)
{
	std::uint64_t count = layout.num_syms;
	std::size_t after_index = static_cast<std::size_t>(
		align_up(layout.base_vaddr + layout.token_index + 512, 8) - layout.base_vaddr);
	std::vector<Placement> out;
	if (mode == Mode::absolute) {
		if (layout.num_syms_at >= 8 * count)
			out.push_back({layout.num_syms_at - 8 * count, KallsymsLayout::npos});
		out.push_back({after_index, KallsymsLayout::npos});
		return out;
	}
	std::size_t span = static_cast<std::size_t>(align_up(4 * count, 8));
	if (layout.num_syms_at >= 8 + span)
		out.push_back({layout.num_syms_at - 8 - span, layout.num_syms_at - 8});
	out.push_back({after_index, after_index + span});
	return out;
}

bool seqs_sorted(ByteSpan bytes, std::size_t at, std::uint32_t count,
		 const std::vector<std::string_view> &names)
{
	if (at > bytes.size() || (bytes.size() - at) / 3 < count)
		return false;
	std::string_view previous;
	for (std::uint32_t i = 0; i < count; i++) {
		const std::uint8_t *entry = bytes.data() + at + 3 * i;
		std::uint32_t seq = (std::uint32_t{entry[0]} << 16) | (std::uint32_t{entry[1]} << 8) | entry[2];
		if (seq >= names.size())
			return false;
		if (names[seq] < previous)
			return false;
		previous = names[seq];
	}
	return true;
}

}  // namespace

Result<void> find_addresses(ByteSpan bytes, KallsymsLayout &layout, std::vector<std::uint64_t> &addresses)
{
	for (Mode mode : {Mode::absolute_percpu, Mode::relative, Mode::absolute}) {
		for (const Placement &where : placements(layout, mode)) {
			if (!decode(bytes, layout, mode, where, addresses))
				continue;
			layout.mode = mode;
			layout.addresses = where.addresses;
			layout.relative_base_at = where.relative_base_at;
			if (mode != Mode::absolute)
				layout.relative_base = *read_le<std::uint64_t>(bytes, where.relative_base_at);
			return {};
		}
	}
	addresses.clear();
	return make_error("kallsyms_names found (" + std::to_string(layout.num_syms) +
				  " symbols) but no sorted kallsyms_offsets/kallsyms_addresses next to it",
			  layout.num_syms_at);
}

void find_seqs_of_names(ByteSpan bytes, KallsymsLayout &layout, const std::vector<std::string_view> &names)
{
	if (names.size() != layout.num_syms || layout.markers == KallsymsLayout::npos)
		return;
	std::uint64_t marker_count = (layout.num_syms + 255) / 256;
	std::vector<std::size_t> candidates = {layout.markers + layout.marker_width * marker_count};
	if (layout.relative_base_at != KallsymsLayout::npos)
		candidates.push_back(layout.relative_base_at + 8);
	else if (layout.addresses != KallsymsLayout::npos)
		candidates.push_back(layout.addresses + 8 * std::size_t{layout.num_syms});
	for (std::size_t candidate : candidates) {
		std::size_t at = static_cast<std::size_t>(align_up(layout.base_vaddr + candidate, 8) - layout.base_vaddr);
		if (seqs_sorted(bytes, at, layout.num_syms, names)) {
			layout.seqs_of_names = at;
			return;
		}
	}
}

}  // namespace vtice::symbols::detail
