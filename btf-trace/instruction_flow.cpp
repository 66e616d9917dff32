#include "instruction_flow.hpp"

namespace vtice::trace {

namespace {

bool falls_through(const Instruction &insn)
{
	return insn.branch == BranchKind::None || insn.branch == BranchKind::Jcc;
}

}  // namespace

// As hypervisor/debug/btf_block.c decides: every instruction from address up
// to and including the first that always branches decodes and is no TF
// hazard, within kBranchStepScan instructions.
bool BlockCounter::branch_step_safe(std::uint64_t address) const
{
	for (std::uint32_t n = 0; n < kBranchStepScan; n++) {
		auto insn = classifier_.decode(address);
		if (!insn || insn->tf_hazard)
			return false;
		if (!falls_through(*insn))
			return true;
		address += insn->length;
	}
	return false;
}

// The tracer's steps over one block: from each position a branch step to the
// block's taken branch where the scan allows one, else one instruction.
std::uint32_t BlockCounter::branch_steps(const std::uint64_t *addresses, std::size_t n) const
{
	std::uint32_t steps = 0;
	for (std::size_t i = 0; i < n; i++) {
		steps++;
		if (branch_step_safe(addresses[i]))
			break;
	}
	return steps;
}

std::optional<BlockCost> BlockCounter::decode_block(std::uint64_t start, std::uint64_t end) const
{
	std::vector<std::uint64_t> addresses;
	std::uint64_t address = start;
	for (std::uint32_t n = 1; n <= kMaxBlock; n++) {
		if (address > end)
			return std::nullopt;
		if (price_)
			addresses.push_back(address);
		if (address == end && !price_)
			return BlockCost{n};
		if (address == end)
			return BlockCost{n, branch_steps(addresses.data(), n), branch_steps(addresses.data(), n - 1) + 1};
		auto insn = classifier_.decode(address);
		if (!insn || !falls_through(*insn))
			return std::nullopt;
		address += insn->length;
	}
	return std::nullopt;
}

std::optional<BlockCost> BlockCounter::count_new(std::uint64_t start, std::uint64_t end)
{
	return cache_.insert({start, end}, decode_block(start, end));
}

FlowDecoder::CpuFlow &FlowDecoder::add_cpu(std::uint16_t id)
{
	cpus_.resize(std::size_t(id) + 1);
	return cpus_[id];
}

}  // namespace vtice::trace
