// Moving through a replay by the code's structure: call depth per position
// (from decoding each step's instruction in the recording's code), hence
// finish, reverse-finish, nexti, reverse-nexti and the call stack, plus the
// queries: who last wrote an address, when a register held a value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "disassembler.hpp"
#include "replay_engine.hpp"

namespace vtice::replay {

class Navigator {
public:
	Navigator(Replay &replay, const Disassembler &disassembler);

	int depth(std::size_t position) const { return depth_[position]; }
	// The instruction at a position (nothing when its code is not in the recording).
	std::optional<Instruction> instruction(std::size_t position) const;

	std::size_t finish(std::size_t from) const;           // first later position in the caller
	std::size_t reverse_finish(std::size_t from) const;   // the call that entered this function
	std::size_t next(std::size_t from) const;             // one instruction, calls run through
	std::size_t reverse_next(std::size_t from) const;
	// Positions of the calls that enclose a position, innermost first.
	std::vector<std::size_t> call_stack(std::size_t position) const;
	// The first position after `from` (or before it, backwards) whose pc is address.
	std::optional<std::size_t> find_pc(std::uint64_t address, std::size_t from, bool forward) const;
	// The first position after `from` (or the last before it) where the
	// register comes to hold value (it did not one step before).
	std::optional<std::size_t> find_register(const std::string &name, std::uint64_t value, std::size_t from,
						 bool forward);

private:
	// The step's event came before its instruction ran (see the .cpp).
	bool interrupted_before(std::size_t j) const;

	Replay &replay_;
	const Disassembler &disassembler_;
	std::vector<int> depth_;
};

}  // namespace vtice::replay
