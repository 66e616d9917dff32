// What a root recording's memory events mean, decoded. The hypervisor does
// not decode operand sizes: it reads 8-byte windows at a step's memory
// operand, below RSP and at RDI (hypervisor/debug/step_windows.h) and
// gives what it read and what changed. The console decodes each step with
// Zydis from the recording's code and registers and makes the events say
// what the instruction did:
// - window bytes it wrote are a write, also when they did not change (a
//   store of the value already there); bytes it read and wrote, ReadWrite;
// - window bytes it neither read nor wrote are only Seen;
// - bytes a store wrote where no window looked are Unseen: unknown from
//   that step on, never the stale value the replay saw there last. Those
//   are the part of a store wider than the windows past them (a vector
//   store, CMPXCHG16B, FXSAVE, the XSAVE family, SGDT), and stores to an
//   operand root could not place (an EVEX disp8, whose scale the opcode
//   decides: insn.h), MOVDIR64B's destination. (ENTER's nested frame
//   pointers are not among them: Zydis lists only its push.)
// A step that ended in an IDT handler is left as root gave it: its
// instruction may not have run.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "recording.hpp"

namespace vtice::replay {

struct RootAccesses {
	std::uint64_t same_value_stores = 0;  // stores whose window root saw unchanged
	std::uint64_t unseen_stores = 0;      // stores with bytes no window saw
	std::uint64_t unseen_bytes = 0;       // those bytes
	std::uint64_t undecoded = 0;          // steps whose instruction was not in the code
};

// pages: the kernel text the steps ran, by page address (4 KiB each).
RootAccesses decode_root_accesses(Recording &recording,
				  const std::map<std::uint64_t, std::vector<std::uint8_t>> &pages);

}  // namespace vtice::replay
