// A TraceResult as a vtice trace file (btf-trace's writer) and as a
// function graph (btf-trace's decoder and renderer).
#pragma once

#include <string>

#include "block_tracer.hpp"

namespace vtice::dbg {

struct TraceRendering {
	std::string graph;                 // ftrace function_graph-style text
	std::uint64_t decoded_instructions = 0;  // by btf-trace's decoder, over the whole tree
	std::size_t functions = 0;         // call nodes in the tree
};

TraceRendering render_trace(const TraceResult &trace, const Symbolizer &symbolize);

// Writes records, the text pages they ran through and the symbols they hit.
Result<void> write_trace_file(const std::string &path, const TraceResult &trace, const SymbolSource *symbols,
			      std::int64_t slide);

}  // namespace vtice::dbg
