// btf-trace's call tree -> the trace pane's nodes, and trace files -> trees.
//
// btf-trace keeps its tree flat (nodes linked by index, walked without
// recursion, since a hostile trace may nest millions deep); the pane's tree
// nests. The conversion cuts nesting at kMaxDepth and says so in a note, so
// neither it nor the pane recurses without bound.
#pragma once

#include <string>

#include "call_tree.hpp"
#include "trace_tree.hpp"
#include "vtice/result.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice::tui {

constexpr int kMaxTraceDepth = 256;

// Durations in ns when tsc_khz is known; else the instructions each call ran
// (children included), which btf-trace counts by decoding: raw TSC ticks
// without a rate mean nothing to a reader, and the RSP tracer's "TSC" is an
// instruction count anyway.
TraceTree convert_call_tree(const trace::CallTree &tree, std::uint64_t tsc_khz, const Symbolizer &symbolize);

// Reads a vtice trace file and builds its tree, named with the file's own
// symbol table (and `symbolize` for addresses the file does not name). A
// damaged file yields the tree of its valid prefix and the damage in `note`.
struct LoadedTrace {
	TraceTree tree;
	std::string note;
};
Result<LoadedTrace> load_trace_file(const std::string &path, const Symbolizer &symbolize = {});

}  // namespace vtice::tui
