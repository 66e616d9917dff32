// The call tree the trace pane shows.
//
// btf-trace/ (branch `trace`) builds its own call tree; until that lands in
// main the TUI renders this minimal node, and session_model.cpp converts the
// engine's tree into it. Durations are in `unit` (instructions for stepping
// tracers, ns for timed ones) so the pane need not know how they were taken.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vtice::tui {

inline constexpr std::uint64_t kClockOpen = ~std::uint64_t(0);

struct TraceNode {
	std::string name;          // "do_sys_openat2"
	std::uint64_t address = 0;
	std::uint64_t duration = 0;  // inclusive of the children, in TraceTree::unit
	std::vector<TraceNode> children;
	bool timed = true;         // false: no end seen (still running), no duration
	std::string note;          // "already running", "unwound", "lost 3 records"
	std::uint64_t instructions = 0;  // inclusive, when known (0: unknown)
	// Where it ran on the trace's clock: from its first instruction up to
	// after its return. A call already running when the trace began starts
	// at 0; one whose return was not seen runs to the end.
	std::uint64_t clock_start = 0, clock_end = kClockOpen;
};

struct TraceTree {
	TraceNode root;     // synthetic root; its children are the top-level calls
	std::string unit = "insn";
	std::string title;  // where it came from: "demo.vtrace"
	// The clock counts instructions (a stepped trace): a replay's position
	// (Model::replay_instruction) falls in a call's [clock_start, clock_end).
	bool instruction_clock = false;
};

// The calls running instruction `instruction` of an instruction-clocked
// tree, outermost first; empty when none does (or the clock is time).
std::vector<const TraceNode *> calls_at_instruction(const TraceTree &tree, std::uint64_t instruction);

}  // namespace vtice::tui
