// Stack unwinding: ORC tables when available, else a marked heuristic scan.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vtice/result.hpp"

namespace vtice::dbg {

struct Frame {
	std::uint64_t pc = 0;
	std::uint64_t sp = 0;
	bool reliable = true;  // false: found by scanning the stack ("? func+0x12")
	std::string note;      // "orc", "scan", "regs" (an interrupt/syscall frame)
};

// Registers an unwinder needs at a frame.
struct UnwindRegs {
	std::uint64_t ip = 0, sp = 0, bp = 0;
	std::uint64_t dx = 0, di = 0, r10 = 0, r13 = 0;
	bool full = true;  // dx/di/r10/r13 valid (only in the first frame or after a pt_regs frame)
};

using MemoryReader = std::function<Result<std::uint64_t>(std::uint64_t address)>;
using TextCheck = std::function<bool(std::uint64_t address)>;  // is this kernel text?

class Unwinder {
public:
	virtual ~Unwinder() = default;
	virtual Result<std::vector<Frame>> unwind(const UnwindRegs &regs, const MemoryReader &read,
						  std::size_t max_frames) const = 0;
	virtual std::string name() const = 0;
};

// The kernel's heuristic: every word on the stack that points into text.
std::vector<Frame> scan_stack(std::uint64_t sp, std::uint64_t stack_end, const MemoryReader &read,
			      const TextCheck &is_text, std::size_t max_frames);

}  // namespace vtice::dbg
