// ev_ layer: raw records -> branch events. Each branch is classified by
// disassembling the instruction at its `from` (cached per address, since a
// trace passes the same few thousand branch sites millions of times).
#pragma once

#include <cstdint>
#include <optional>

#include "code_source.hpp"
#include "disassembler.hpp"
#include "flat_map.hpp"
#include "vtice/records.h"

namespace vtice::trace {

enum class EventType : std::uint8_t {
	Branch,   // a taken branch (or an async entry when flags has VTICE_BRANCH_ASYNC)
	Lost,     // `lost` records were dropped: state across this point is unknown
	Resync,   // the flow restarts here (LBR snapshot): no instruction count across it
	Other,    // syscall/breakpoint/test records: nothing for the call tree
};

struct BranchInfo {
	BranchKind kind = BranchKind::None;
	std::uint8_t length = 0;  // of the instruction at `from`
	bool classified = false;  // false: no code at `from`, or it did not decode
};

struct BranchEvent {
	EventType type = EventType::Other;
	std::uint16_t cpu = 0;
	std::uint32_t flags = 0;
	std::uint64_t tsc = 0;
	std::uint64_t from = 0, to = 0;
	std::uint64_t lost = 0;
	BranchInfo info;

	bool async() const { return (flags & VTICE_BRANCH_ASYNC) != 0; }
};

class BranchClassifier {
public:
	BranchClassifier(const CodeSource &code, const Disassembler &disassembler)
		: code_(code), disassembler_(disassembler) {}

	// Inline: it runs once per record and the decode once per address.
	const BranchInfo &classify(std::uint64_t from)
	{
		if (const BranchInfo *hit = cache_.find(from)) [[likely]]
			return *hit;
		return classify_new(from);
	}
	// One instruction at address, uncached; nothing when no code decodes there.
	std::optional<Instruction> decode(std::uint64_t address) const;

private:
	const BranchInfo &classify_new(std::uint64_t from);

	const CodeSource &code_;
	const Disassembler &disassembler_;
	FlatMap<std::uint64_t, BranchInfo> cache_;
};

// Inline: it runs once per record, and the call with the event returned
// through memory cost ~11 Ir per record.
inline BranchEvent make_event(const vtice_record &record, BranchClassifier &classifier)
{
	BranchEvent event;
	event.cpu = record.cpu;
	event.flags = record.flags;
	event.tsc = record.tsc;
	switch (record.type) {
	case VTICE_REC_BRANCH:
		event.type = EventType::Branch;
		event.from = record.u.branch.from;
		event.to = record.u.branch.to;
		// An async entry interrupts the instruction at `from`; it did not branch.
		if (!event.async())
			event.info = classifier.classify(event.from);
		break;
	case VTICE_REC_LOST:
		event.type = EventType::Lost;
		event.lost = record.u.lost.count;
		break;
	case VTICE_REC_LBR_SNAPSHOT:
		event.type = EventType::Resync;
		break;
	default:
		event.type = EventType::Other;
		break;
	}
	return event;
}

}  // namespace vtice::trace
