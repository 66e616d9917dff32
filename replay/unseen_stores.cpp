// Unseen stores of a root recording (unseen_stores.hpp).
#include "unseen_stores.hpp"

#include <algorithm>

#include "memory_access.hpp"

namespace vtice::replay {

namespace {

constexpr std::uint64_t kPage = 4096;
constexpr std::uint32_t kWindowBytes = 8;  // VT_STEP_WINDOW_BYTES
// An XSAVE writes as far as its state components reach: CPUID leaf 0DH
// gives the area's size on a CPU (SDM Vol. 1 13.2), which the recording
// does not keep. 16 KiB holds the largest (AMX's tile data alone is 8 KiB).
constexpr std::uint32_t kExtendedStateMax = 16384;

// Up to 15 bytes of the instruction at address; fewer where the pages end.
std::vector<std::uint8_t> instruction_bytes(const std::map<std::uint64_t, std::vector<std::uint8_t>> &pages,
					    std::uint64_t address)
{
	std::vector<std::uint8_t> out;
	while (out.size() < 15) {
		std::uint64_t at = address + out.size();
		auto page = pages.find(at & ~(kPage - 1));
		if (page == pages.end() || (at & (kPage - 1)) >= page->second.size())
			break;
		out.push_back(page->second[at & (kPage - 1)]);
	}
	return out;
}

// The byte ranges of [start, end) no write event of the step covers.
std::vector<std::pair<std::uint64_t, std::uint64_t>> uncovered(const Step &step, std::uint64_t start,
							      std::uint64_t end)
{
	std::vector<std::pair<std::uint64_t, std::uint64_t>> covered, out;
	for (const MemoryEvent &event : step.memory)
		if (event.writes())
			covered.emplace_back(event.address, event.address + event.length());
	std::sort(covered.begin(), covered.end());
	for (const auto &[from, to] : covered) {
		if (to <= start || from >= end)
			continue;
		if (from > start)
			out.emplace_back(start, from);
		start = std::max(start, to);
	}
	if (start < end)
		out.emplace_back(start, end);
	return out;
}

}  // namespace

UnseenStores mark_unseen_stores(Recording &recording, const std::map<std::uint64_t, std::vector<std::uint8_t>> &pages)
{
	UnseenStores found;
	Disassembler disassembler;
	const auto offsets = register_offsets(recording.registers);
	std::vector<std::uint8_t> regs = recording.initial;
	RegisterSource source = [&](std::string_view name) -> std::optional<std::uint64_t> {
		int index = register_index(recording.registers, name);
		if (index < 0)
			return std::nullopt;
		return register_low64(recording.registers, offsets, regs, index);
	};
	for (Step &step : recording.steps) {
		std::uint64_t rip = source("rip").value_or(0);
		auto insn = disassembler.decode(instruction_bytes(pages, rip), rip);
		if (!insn) {
			found.undecoded++;
		} else {
			for (const MemoryAccess &access : memory_accesses(*insn, source)) {
				// Up to 8 bytes the windows hold; a REP string step is one element.
				if (!access.write || (access.size <= kWindowBytes && !access.extended_state))
					continue;
				std::uint32_t size = access.extended_state ? kExtendedStateMax : access.size;
				auto gaps = uncovered(step, access.address, access.address + size);
				for (const auto &[from, to] : gaps) {
					MemoryEvent event;
					event.kind = AccessKind::Unseen;
					event.address = from;
					event.unseen = static_cast<std::uint32_t>(to - from);
					step.memory.push_back(event);
					found.bytes += to - from;
				}
				found.stores += !gaps.empty();
			}
		}
		for (const RegisterChange &change : step.registers)
			std::copy(change.value.begin(), change.value.end(), regs.begin() + offsets[change.index]);
	}
	return found;
}

}  // namespace vtice::replay
