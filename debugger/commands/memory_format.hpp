// Hex dumps shared by x and db/dw/dd/dq.
#pragma once

#include "commands.hpp"

namespace vtice::dbg {

// Prints count units of unit_size bytes from address, gdb style:
// "0xffffffff82000000 <sym>:\t0x0000000000000001\t0x...".
Result<void> dump_memory(CommandContext &ctx, std::uint64_t address, unsigned unit_size, std::uint64_t count);

}  // namespace vtice::dbg
