// A root recording's memory events, decoded (root_accesses.hpp).
#include "root_accesses.hpp"

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

using Ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;  // [start, end)

bool contains(const Ranges &ranges, std::uint64_t address)
{
	return std::any_of(ranges.begin(), ranges.end(),
			   [&](const auto &r) { return address >= r.first && address < r.second; });
}

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

struct Decoded {
	Ranges reads, writes;
	// What an XSAVE may write: the components XCR0 and the mask select,
	// less those the init and modified optimizations of XSAVEOPT, XSAVEC
	// and XSAVES skip (SDM Vol. 1 13.6-13.11). A byte root saw unchanged
	// there is only Seen.
	Ranges may_writes;
	// The windows root opens at every step whatever the instruction, below
	// RSP and at RDI (step_windows.c): bytes it saw there unchanged have no
	// event, and are known all the same.
	Ranges windows;
};

Decoded ranges_of(const std::vector<MemoryAccess> &accesses, std::uint64_t rsp, std::uint64_t rdi)
{
	Decoded d;
	for (const MemoryAccess &a : accesses) {
		if (a.read)
			d.reads.emplace_back(a.address, a.address + a.size);	// a REP step: one element
		if (a.write && a.extended_state)
			d.may_writes.emplace_back(a.address, a.address + kExtendedStateMax);
		else if (a.write)
			d.writes.emplace_back(a.address, a.address + a.size);
	}
	d.windows = {{rsp - kWindowBytes, rsp}, {rdi, rdi + kWindowBytes}};
	return d;
}

// A root Read or Write event split into runs of one meaning each.
void split_event(const MemoryEvent &event, const Decoded &d, std::vector<MemoryEvent> &out, bool &same_value)
{
	std::size_t n = event.length();
	auto kind_of = [&](std::size_t i) {
		std::uint64_t address = event.address + i;
		bool changed = event.kind == AccessKind::Write && event.before[i] != event.after[i];
		bool read = contains(d.reads, address), wrote = changed || contains(d.writes, address);
		if (wrote && event.kind == AccessKind::Read)
			same_value = true;
		return wrote ? (read ? AccessKind::ReadWrite : AccessKind::Write) : read ? AccessKind::Read : AccessKind::Seen;
	};
	for (std::size_t i = 0; i < n;) {
		AccessKind kind = kind_of(i);
		std::size_t end = i + 1;
		while (end < n && kind_of(end) == kind)
			end++;
		MemoryEvent run;
		run.kind = kind;
		run.address = event.address + i;
		run.before.assign(event.before.begin() + i, event.before.begin() + end);
		if (run.writes()) {
			const auto &after = event.kind == AccessKind::Write ? event.after : event.before;
			run.after.assign(after.begin() + i, after.begin() + end);
		}
		out.push_back(std::move(run));
		i = end;
	}
}

// The bytes of [start, end) that neither a write event nor one of root's
// fixed windows covers, as Unseen events (maybe: stores that may not have
// happened); their count.
std::uint64_t add_unseen(std::vector<MemoryEvent> &events, std::uint64_t start, std::uint64_t end,
			 const Ranges &windows, bool maybe)
{
	Ranges covered = windows;
	for (const MemoryEvent &event : events)
		if (event.writes())
			covered.emplace_back(event.address, event.address + event.length());
	std::sort(covered.begin(), covered.end());
	std::uint64_t added = 0;
	auto add = [&](std::uint64_t from, std::uint64_t to) {
		MemoryEvent event;
		event.kind = AccessKind::Unseen;
		event.address = from;
		event.unseen = static_cast<std::uint32_t>(to - from);
		event.maybe = maybe;
		events.push_back(event);
		added += to - from;
	};
	for (const auto &[from, to] : covered) {
		if (to <= start || from >= end)
			continue;
		if (from > start)
			add(start, from);
		start = std::max(start, to);
	}
	if (start < end)
		add(start, end);
	return added;
}

bool delivered_an_event(const Step &step)
{
	return std::any_of(step.memory.begin(), step.memory.end(),
			   [](const MemoryEvent &e) { return e.kind == AccessKind::WriteUnknownOld; });
}

void decode_step(Step &step, const Decoded &d, RootAccesses &found)
{
	std::vector<MemoryEvent> events;
	bool same_value = false;
	for (const MemoryEvent &event : step.memory) {
		if (event.kind == AccessKind::Read || event.kind == AccessKind::Write)
			split_event(event, d, events, same_value);
		else
			events.push_back(event);
	}
	found.same_value_stores += same_value;
	auto add_unseen_of = [&](const Ranges &stores, bool maybe) {
		for (const auto &[start, end] : stores) {
			std::uint64_t added = add_unseen(events, start, end, d.windows, maybe);
			found.unseen_bytes += added;
			found.unseen_stores += added != 0;
		}
	};
	add_unseen_of(d.writes, false);
	add_unseen_of(d.may_writes, true);
	step.memory = std::move(events);
}

}  // namespace

RootAccesses decode_root_accesses(Recording &recording,
				  const std::map<std::uint64_t, std::vector<std::uint8_t>> &pages)
{
	RootAccesses found;
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
		if (!insn)
			found.undecoded++;
		else if (!delivered_an_event(step))
			decode_step(step,
				    ranges_of(memory_accesses(*insn, source), source("rsp").value_or(0),
					      source("rdi").value_or(0)),
				    found);
		for (const RegisterChange &change : step.registers)
			std::copy(change.value.begin(), change.value.end(), regs.begin() + offsets[change.index]);
	}
	return found;
}

}  // namespace vtice::replay
