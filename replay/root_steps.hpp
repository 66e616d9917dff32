// A recording made in VMX root (a path trace armed with VTICE_PATH_RECORD,
// include/uapi/vtice/records.h): its STEP, STEP_REGS and STEP_MEM records
// turned into the Recording the RSP recorder writes, so `vtice replay` reads
// either the same way (docs/replay.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "recording.hpp"
#include "vtice/records.h"

namespace vtice::replay {

struct RootSteps {
	Recording recording;      // registers, initial state and steps; code is the caller's to add
	std::uint64_t reads = 0;  // operands read (STEP_MEM READ)
	std::uint64_t writes = 0; // 8-byte windows a step changed
	std::uint64_t frame_bytes = 0;	// written by interrupt and exception delivery
	// Why the recording ends before the call did ("" when it does not): a
	// LOST record, or a group the hypervisor left incomplete.
	std::string cut;
};

// The registers a root recording keeps, in gdb's amd64 'g' order as far as
// they go: the 16 general registers, rip, eflags, fs_base and gs_base.
std::vector<RegisterSpec> root_registers();

// The records of one traced call, in stamp order (other record types are
// passed over). Fails when they hold no step or no register file to start from.
Result<RootSteps> steps_from_records(std::span<const vtice_record> records);

}  // namespace vtice::replay
