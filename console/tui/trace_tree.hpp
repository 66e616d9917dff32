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

struct TraceNode {
	std::string name;          // "do_sys_openat2"
	std::uint64_t address = 0;
	std::uint64_t duration = 0;  // inclusive of the children, in TraceTree::unit
	std::vector<TraceNode> children;
	bool timed = true;         // false: no end seen (still running), no duration
	std::string note;          // "already running", "unwound", "lost 3 records"
	std::uint64_t instructions = 0;  // inclusive, when known (0: unknown)
};

struct TraceTree {
	TraceNode root;     // synthetic root; its children are the top-level calls
	std::string unit = "insn";
	std::string title;  // where it came from: "demo.vtrace"
};

}  // namespace vtice::tui
