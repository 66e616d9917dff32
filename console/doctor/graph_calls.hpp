// The calls of a function graph in ftrace's function_graph layout, as the
// kernel's tracer prints it and as `vtice trace syscall` prints it, and how
// many of one graph's calls appear in the other, in order: vtice doctor's
// check of a hypervisor trace against the kernel's own ftrace.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vtice::console::doctor {

// The calls of the kernel's function_graph text (/sys/kernel/tracing/trace)
// inside each call of root, each in order, without interrupts
// (irq_enter_rcu to the end of irq_exit_rcu at the same depth) and without
// the scheduler's subtrees (timing, not the path).
std::vector<std::vector<std::string>> ftrace_calls(std::string_view text, std::string_view root);

// The calls of vtice's function graph, without the interrupt and exception
// subtrees it marks (==========> ... <==========) and without the
// scheduler's subtrees.
std::vector<std::string> vtice_calls(std::string_view text);

struct GraphMatch {
	std::size_t matched = 0;		// of the oracle's calls, found in order
	std::size_t total = 0;			// the oracle's calls
	std::vector<std::string> missing;	// the oracle's calls not found, in order
	double score() const { return total ? static_cast<double>(matched) / total : 0.0; }
};

// Which of the oracle's calls appear in ours, in order: the longest common
// subsequence. Its table is oracle x ours cells; a pair too large for
// max_cells (memory) is refused as no match, with the reason in missing.
GraphMatch match_calls(const std::vector<std::string> &oracle, const std::vector<std::string> &ours,
		       std::size_t max_cells = 64u << 20);

// The match with the oracle call ours is closest to: two calls of one
// syscall can take different slow paths. No oracle is no match.
GraphMatch closest_match(const std::vector<std::vector<std::string>> &oracles,
			 const std::vector<std::string> &ours, std::size_t max_cells = 64u << 20);

}  // namespace vtice::console::doctor
