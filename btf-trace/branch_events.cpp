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

}  // namespace vtice::trace
