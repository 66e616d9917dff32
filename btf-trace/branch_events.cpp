#include "branch_events.hpp"

namespace vtice::trace {

std::optional<Instruction> BranchClassifier::decode(std::uint64_t address) const
{
	auto bytes = code_.read(address, 15);
	if (bytes.empty())
		return std::nullopt;
	auto insn = disassembler_.decode(bytes, address);
	if (!insn)
		return std::nullopt;
	return *insn;
}

const BranchInfo &BranchClassifier::classify_new(std::uint64_t from)
{
	BranchInfo info;
	if (auto insn = decode(from))
		info = BranchInfo{insn->branch, insn->length, true};
	return cache_.insert(from, info);
}

BranchEvent make_event(const vtice_record &record, BranchClassifier &classifier)
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
