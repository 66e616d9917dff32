// A TraceResult as vtice trace contents: written as a trace file, and
// rendered by the same path `vtice report` takes for that file.
#pragma once

#include <string>

#include "block_tracer.hpp"
#include "trace_render.hpp"

namespace vtice::dbg {

// Records (their clock: instructions retired), the text pages they ran
// through, and, with symbols, the functions they touched, so the file
// renders without a vmlinux.
trace::TraceData trace_contents(const TraceResult &trace, const SymbolSource *symbols, std::int64_t slide);

// The function graph, as `vtice report` renders the file written from it.
trace::RenderedTrace render_trace(const TraceResult &trace, const Symbolizer &symbolize);

Result<void> write_trace_file(const std::string &path, const TraceResult &trace, const SymbolSource *symbols,
			      std::int64_t slide);

}  // namespace vtice::dbg
