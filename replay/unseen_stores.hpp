// The stores a root recording did not see. The hypervisor watches 8 bytes
// at a step's memory operand, 8 below RSP and 8 at RDI
// (hypervisor/debug/step_windows.h); a wider store (a vector store,
// CMPXCHG16B, FXSAVE, the XSAVE family, SGDT) writes on past them. Decoded
// with Zydis from the recording's code and registers, those bytes become
// Unseen stores: unknown from that step on, never the stale value the
// replay saw there last.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "recording.hpp"

namespace vtice::replay {

struct UnseenStores {
	std::uint64_t stores = 0;   // steps' stores with bytes the windows missed
	std::uint64_t bytes = 0;    // those bytes
	std::uint64_t undecoded = 0;  // steps whose instruction was not in the code
};

// Adds the Unseen events to the recording's steps. pages: the kernel text the
// steps ran, by page address (4 KiB each).
UnseenStores mark_unseen_stores(Recording &recording, const std::map<std::uint64_t, std::vector<std::uint8_t>> &pages);

}  // namespace vtice::replay
