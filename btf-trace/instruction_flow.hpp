// insn_ layer: branch events -> instruction flow. Between one branch's `to`
// and the next branch's `from` the CPU ran straight-line code (not-taken
// conditionals only), so the instruction count is a linear decode of that
// block, cached per (start, end).
#pragma once

#include <optional>
#include <vector>

#include "branch_events.hpp"

namespace vtice::trace {

struct FlowEvent {
	BranchEvent event;
	std::uint64_t insns = 0;   // executed since the previous event on this CPU, branch included
	bool insns_known = false;  // false at the start, after lost records, or when code is missing
};

class BlockCounter {
public:
	explicit BlockCounter(const BranchClassifier &classifier) : classifier_(classifier) {}

	// Instructions from start up to and including the one at end; nothing when
	// end is not reached by straight-line decode (missing code, or a taken
	// branch in between, which means records are missing).
	std::optional<std::uint32_t> count(std::uint64_t start, std::uint64_t end);

	static constexpr std::uint32_t kMaxBlock = 1u << 16;

private:
	std::optional<std::uint32_t> decode_block(std::uint64_t start, std::uint64_t end) const;

	const BranchClassifier &classifier_;
	FlatMap<AddressPair, std::optional<std::uint32_t>> cache_;
};

class FlowDecoder {
public:
	explicit FlowDecoder(const BranchClassifier &classifier) : blocks_(classifier) {}
	FlowEvent next(const BranchEvent &event);

private:
	struct CpuFlow {
		std::uint64_t resume = 0;  // where the CPU went after the last branch
		bool valid = false;
	};

	CpuFlow &cpu(std::uint16_t id);

	BlockCounter blocks_;
	std::vector<CpuFlow> cpus_;
};

}  // namespace vtice::trace
