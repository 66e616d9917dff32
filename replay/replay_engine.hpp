// Replay of a step recording: any position's registers and memory, with no
// target. Position k is the state after k steps (0: where the recording
// began, steps(): where it ended). Memory is known where the recording saw
// it (the stack at step 0, every byte a step read or wrote, the code it
// ran); anything else is unknown, never guessed.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "recording.hpp"

namespace vtice::replay {

class Replay {
public:
	explicit Replay(Recording recording);

	std::size_t steps() const { return recording_.steps.size(); }
	std::size_t position() const { return position_; }
	const Recording &recording() const { return recording_; }
	const Step &step(std::size_t index) const { return recording_.steps[index]; }

	// Moves to position k (clamped to steps()).
	void seek(std::size_t k);

	// The registers at the current position, laid out like the 'g' block.
	const std::vector<std::uint8_t> &registers() const { return registers_; }
	// The low 64 bits of a register by name at the current position.
	std::optional<std::uint64_t> reg(std::string_view name) const;
	int register_index(std::string_view name) const;
	std::size_t register_offset(std::size_t index) const { return offsets_[index]; }
	// The instruction pointer at any position, without seeking.
	std::uint64_t pc_at(std::size_t k) const { return pcs_[k]; }
	// Instructions retired in the steps before position k: the trace's
	// instruction clock (a REP string instruction's iterations are steps of
	// one instruction, which retires when the pc moves on).
	std::uint64_t instructions_at(std::size_t k) const { return retired_[k]; }

	// Memory at the current position: the known bytes from address on, up
	// to length, stopping at the first unknown byte.
	std::vector<std::uint8_t> read(std::uint64_t address, std::size_t length) const
	{
		return read_at(address, length, position_);
	}
	// The same at any position, without seeking.
	std::vector<std::uint8_t> read_at(std::uint64_t address, std::size_t length, std::size_t k) const;

	// The last step before `before` that wrote any byte of [address,
	// address + length); nothing when none did.
	std::optional<std::size_t> last_write(std::uint64_t address, std::size_t length, std::size_t before) const;
	// Whether step j read / wrote any byte of [address, address + length).
	bool step_writes(std::size_t j, std::uint64_t address, std::size_t length) const;
	bool step_reads(std::size_t j, std::uint64_t address, std::size_t length) const;

private:
	struct ByteEvent {
		std::uint32_t step;
		bool write;          // else a read or the snapshot at step 0
		bool before_known;
		bool after_known;    // a write's new value (not an Unseen store's)
		std::uint8_t before, after;
	};
	void index_memory();
	void apply(std::size_t j, std::vector<std::uint8_t> &regs) const;
	void undo(std::size_t j, std::vector<std::uint8_t> &regs) const;
	std::optional<std::uint8_t> byte_at(std::uint64_t address, std::size_t k) const;
	std::optional<std::uint8_t> code_byte(std::uint64_t address) const;

	static constexpr std::size_t kCheckpointEvery = 1024;

	Recording recording_;
	std::vector<std::size_t> offsets_;
	std::vector<std::vector<std::uint8_t>> checkpoints_;
	std::vector<std::vector<RegisterChange>> undo_;  // per step: the values its changes replaced
	std::vector<std::uint64_t> pcs_;
	std::vector<std::uint64_t> retired_;  // per position: instructions_at
	std::unordered_map<std::uint64_t, std::vector<ByteEvent>> bytes_;
	std::vector<std::uint8_t> registers_;
	std::size_t position_ = 0;
};

}  // namespace vtice::replay
