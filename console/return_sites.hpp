// Where a kernel function returns, for fn:NAME:return probes: its RET
// instructions, and on a kernel with return thunks (retbleed, SRSO, ITS
// mitigations) its JMPs to one, which stand for a RET. A probe on each sees
// RAX, the return value, before the function leaves. Found by decoding the
// function's live text, from its symbol to the next one, with Zydis; the
// module checks each site again with its own decoder before arming it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "disassembler.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

struct ReturnSites {
	std::vector<std::uint64_t> sites;	// RETs and JMPs to a return thunk
	// JMPs that leave the function otherwise (tail calls, direct or
	// through a register): the callee returns for it, and no site sees it.
	std::vector<std::uint64_t> tail_calls;
};

// text holds the function's bytes, from start to the next symbol.
// is_return_thunk says whether a direct JMP's target is a return thunk.
Result<ReturnSites> find_return_sites(std::span<const std::uint8_t> text, std::uint64_t start,
				      const Disassembler &disasm,
				      const std::function<bool(std::uint64_t)> &is_return_thunk);

}  // namespace vtice::console
