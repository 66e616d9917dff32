// Whether an instruction starts at an address, for addr: probes: decoded
// with Zydis from the start of the symbol that holds it (the kernel's
// text has no data between a function's instructions). The module checks
// again with its own decoder before it arms the probe.
#pragma once

#include <cstdint>
#include <span>

#include "disassembler.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

// text holds the symbol's bytes from start (at least up to address). An
// error when address is inside an instruction names the instructions on
// either side of it, as offsets from start.
Result<void> check_instruction_start(std::span<const std::uint8_t> text, std::uint64_t start,
				     std::uint64_t address, const Disassembler &disasm);

}  // namespace vtice::console
