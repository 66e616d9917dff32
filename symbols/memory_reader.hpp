// How symbols/ reads memory it does not own (a halted guest, a core file):
// the debugger passes a callback, so this library needs no target types.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

namespace vtice::symbols {

// Reads out.size() bytes at a virtual address; false if any is unreadable.
using MemoryReader = std::function<bool(std::uint64_t address, std::span<std::uint8_t> out)>;

}  // namespace vtice::symbols
