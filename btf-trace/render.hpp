// Renderers over a CallTree: ftrace function_graph-style text, FlameGraph
// folded stacks (weight = instructions), Chrome trace-event JSON (Perfetto).
#pragma once

#include <string>

#include "call_tree.hpp"
#include "trace_file.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice::trace {

struct RenderOptions {
	std::uint64_t tsc_khz = 0;  // 0: show raw TSC ticks instead of microseconds
	Symbolizer symbolize;
	TraceClock clock = TraceClock::Tsc;  // Instructions: durations are instruction counts
};

std::string render_graph(const CallTree &tree, const RenderOptions &options);
std::string render_folded(const CallTree &tree, const RenderOptions &options);
std::string render_perfetto(const CallTree &tree, const RenderOptions &options);

// "do_sys_openat2"; a frame already running at trace start is named by the
// function around its first address.
std::string node_name(const CallNode &node, const Symbolizer &symbolize);

}  // namespace vtice::trace
