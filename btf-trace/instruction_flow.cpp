#include "instruction_flow.hpp"

namespace vtice::trace {

std::optional<std::uint32_t> BlockCounter::decode_block(std::uint64_t start, std::uint64_t end) const
{
	std::uint64_t address = start;
	for (std::uint32_t n = 1; n <= kMaxBlock; n++) {
		if (address > end)
			return std::nullopt;
		if (address == end)
			return n;
		auto insn = classifier_.decode(address);
		if (!insn)
			return std::nullopt;
		bool falls_through = insn->branch == BranchKind::None || insn->branch == BranchKind::Jcc;
		if (!falls_through)
			return std::nullopt;
		address += insn->length;
	}
	return std::nullopt;
}

std::optional<std::uint32_t> BlockCounter::count(std::uint64_t start, std::uint64_t end)
{
	AddressPair key{start, end};
	if (auto *hit = cache_.find(key))
		return *hit;
	return cache_.insert(key, decode_block(start, end));
}

FlowDecoder::CpuFlow &FlowDecoder::cpu(std::uint16_t id)
{
	if (id >= cpus_.size())
		cpus_.resize(std::size_t(id) + 1);
	return cpus_[id];
}

FlowEvent FlowDecoder::next(const BranchEvent &event)
{
	FlowEvent out{event};
	CpuFlow &flow = cpu(event.cpu);
	if (event.type == EventType::Lost || event.type == EventType::Resync) {
		flow.valid = false;
		return out;
	}
	if (event.type != EventType::Branch)
		return out;
	if (flow.valid) {
		// The instruction at an async event's `from` was interrupted, not run.
		if (auto n = blocks_.count(flow.resume, event.from)) {
			out.insns = event.async() ? *n - 1 : *n;
			out.insns_known = true;
		}
	}
	flow.resume = event.to;
	flow.valid = true;
	return out;
}

}  // namespace vtice::trace
