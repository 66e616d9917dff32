// insn_ layer: branch events -> instruction flow. Between one branch's `to`
// and the next branch's `from` the CPU ran straight-line code (not-taken
// conditionals only), so the instruction count is a linear decode of that
// block, cached per (start, end). The same decode prices the block for a
// hypervisor tracer that steps with TF and DEBUGCTL.BTF (docs/tracing.md):
// the VM exits it would take there, a model for CPUs this trace did not
// run on.
#pragma once

#include <optional>
#include <vector>

#include "branch_events.hpp"

namespace vtice::trace {

struct FlowEvent {
	BranchEvent event;
	std::uint64_t insns = 0;   // executed since the previous event on this CPU, branch included
	bool insns_known = false;  // false at the start, after lost records, or when code is missing
	// VM exits a TF + BTF tracer would take for those instructions and this
	// event (the model above); 0 when insns is unknown.
	std::uint64_t btf_exits = 0;
};

// What the flow layer works out beyond instruction counts.
struct DecodeOptions {
	bool price_branch_steps = false;  // FlowEvent::btf_exits (costs a second decode of each new block)
};

struct BlockCost {
	std::uint32_t insns = 0;      // from start up to and including the one at end
	std::uint32_t btf_steps = 0;  // the model's steps over them (at least 1; 0 unpriced)
	std::uint32_t btf_steps_interrupted = 0;  // ...over all but the one at end, then one into the event
};

class BlockCounter {
public:
	explicit BlockCounter(const BranchClassifier &classifier, bool price_branch_steps = false)
		: classifier_(classifier), price_(price_branch_steps)
	{
	}

	// The block from start up to and including the instruction at end;
	// nothing when end is not reached by straight-line decode (missing code,
	// or a taken branch in between, which means records are missing).
	// Inline: it runs once per record and the decode once per block.
	std::optional<BlockCost> count(std::uint64_t start, std::uint64_t end)
	{
		if (const auto *hit = cache_.find({start, end})) [[likely]]
			return *hit;
		return count_new(start, end);
	}

	static constexpr std::uint32_t kMaxBlock = 1u << 16;
	// hypervisor/debug/btf_block.h: how far a branch step's scan looks.
	static constexpr std::uint32_t kBranchStepScan = 64;

private:
	std::optional<BlockCost> count_new(std::uint64_t start, std::uint64_t end);
	std::optional<BlockCost> decode_block(std::uint64_t start, std::uint64_t end) const;
	bool branch_step_safe(std::uint64_t address) const;
	std::uint32_t branch_steps(const std::uint64_t *addresses, std::size_t n) const;

	const BranchClassifier &classifier_;
	bool price_;
	FlatMap<AddressPair, std::optional<BlockCost>> cache_;
};

class FlowDecoder {
public:
	explicit FlowDecoder(const BranchClassifier &classifier, const DecodeOptions &options = {})
		: blocks_(classifier, options.price_branch_steps)
	{
	}
	FlowEvent next(const BranchEvent &event);

private:
	struct CpuFlow {
		std::uint64_t resume = 0;  // where the CPU went after the last branch
		bool valid = false;
	};

	// Inline and out of the way of the first sight of a CPU: a call per
	// record cost ~11 Ir.
	CpuFlow &cpu(std::uint16_t id) { return id < cpus_.size() ? cpus_[id] : add_cpu(id); }
	CpuFlow &add_cpu(std::uint16_t id);

	BlockCounter blocks_;
	std::vector<CpuFlow> cpus_;
};

// Inline, like make_event: once per record, where the call and the copies of
// the event in and out of it cost ~21 Ir.
inline FlowEvent FlowDecoder::next(const BranchEvent &event)
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
		// The instruction at an async event's `from` was interrupted, not
		// run; the event is a step of its own for a TF tracer.
		if (auto block = blocks_.count(flow.resume, event.from)) {
			out.insns = event.async() ? block->insns - 1 : block->insns;
			out.insns_known = true;
			out.btf_exits = event.async() ? block->btf_steps_interrupted : block->btf_steps;
		}
	}
	flow.resume = event.to;
	flow.valid = true;
	return out;
}

}  // namespace vtice::trace
