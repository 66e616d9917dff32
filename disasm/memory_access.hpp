// Which memory an instruction reads and writes, given the registers it runs
// with: what a step recorder saves so a replay can show memory as it was.
// Zydis stays behind this header too (CONVENTIONS.md §11).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "disassembler.hpp"

namespace vtice {

struct MemoryAccess {
	std::uint64_t address = 0;
	std::uint32_t size = 0;      // bytes of one access
	bool read = false;
	bool write = false;
	// A REP-prefixed string instruction: `size` is one element; it repeats
	// up to RCX times, downwards when RFLAGS.DF is set.
	bool repeated = false;
	bool downwards = false;
	// The XSAVE family: `size` is the legacy area and header (576 bytes);
	// the CPU writes on as far as the state components XCR0 and XSS enable
	// (SDM Vol. 1 13.4), which the instruction does not say.
	bool extended_state = false;
};

// A register's 64-bit value by its lower-case name ("rax", "rip", "fs_base",
// "gs_base", "eflags"); nothing when the target does not have it.
using RegisterSource = std::function<std::optional<std::uint64_t>(std::string_view name)>;

// The explicit and implicit memory operands of insn (the stack of push,
// call, ret, pop, leave; the string operands of movs, stos ...), with fs and
// gs bases added. An operand whose address needs a register the source does
// not have is left out, and so are operands that touch no memory (lea, nop,
// prefetch, clflush).
std::vector<MemoryAccess> memory_accesses(const Instruction &insn, const RegisterSource &registers);

}  // namespace vtice
