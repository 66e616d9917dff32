// Step recording over RSP: around each single-step of a trace, the
// registers it changed and the memory it read and wrote (old and new
// bytes), so `vtice replay` and `vtice serve-replay` can show any point of
// the path again (replay/recording.hpp, docs/replay.md).
//
// The memory an instruction touches comes from decoding it with the
// registers it runs with (disasm/memory_access.hpp); the stub is asked for
// those bytes before the step (what was there, what a read saw) and after
// it (what a write left). Nothing needs to be replayed by running code, so
// RDTSC, RDRAND, port and MMIO reads and interrupts are recorded by their
// effect on registers and memory.
#pragma once

#include <cstdint>
#include <vector>

#include "../target.hpp"
#include "disassembler.hpp"
#include "memory_access.hpp"
#include "recording.hpp"

namespace vtice::dbg {

class StepRecorder {
public:
	explicit StepRecorder(Target &target) : target_(target) {}

	// Registers at step 0, and the memory of [stack_low, stack_high) (the
	// task's stack from rsp up: frames above the start unwind in a replay).
	Result<void> begin(std::uint64_t stack_low, std::uint64_t stack_high);
	// Before stepping insn: the bytes it will read or overwrite.
	Result<void> before_step(const Instruction &insn);
	// After the step: the registers it changed, the bytes it wrote.
	Result<void> after_step(const Instruction &insn);

	// rip after the last step, from the registers after_step read.
	std::uint64_t pc() const { return value(regs_, "rip").value_or(0); }

	replay::Recording take() { return std::move(recording_); }
	std::size_t steps() const { return recording_.steps.size(); }
	std::uint64_t bytes() const { return bytes_; }
	std::uint64_t unreadable() const { return unreadable_; }

private:
	struct Pending {
		MemoryAccess access;
		std::uint64_t address;   // first byte of the range read before
		std::vector<std::uint8_t> before;
	};
	std::optional<std::uint64_t> value(const std::vector<std::uint8_t> &regs, std::string_view name) const;
	void add_range(const MemoryAccess &access, std::uint64_t rcx);
	void record_exception_frame(std::uint64_t old_sp, std::uint64_t new_sp, replay::Step &step);
	void keep_done_elements(Pending &p, std::uint64_t done, replay::MemoryEvent &event) const;

	Target &target_;
	replay::Recording recording_;
	std::vector<std::uint8_t> regs_;        // at the current step
	std::vector<std::size_t> offsets_;
	std::vector<Pending> pending_;
	std::uint64_t bytes_ = 0;               // register and memory bytes recorded
	std::uint64_t unreadable_ = 0;          // accesses the stub refused to show
};

}  // namespace vtice::dbg
