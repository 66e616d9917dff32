// The one way from a trace's contents to its rendering. `vtice report` on a
// file and `trace` in `vtice attach` both come here, so the live graph and
// the graph of the file it wrote are the same graph.
#pragma once

#include <string>

#include "code_source.hpp"
#include "render.hpp"
#include "trace_file.hpp"

namespace vtice::trace {

// write_graph, write_folded or write_perfetto (render.hpp).
using Renderer = void (*)(const CallTree &, const RenderOptions &, TextSink &);

struct RenderedTrace {
	std::string text;
	std::uint64_t instructions = 0;  // decoded, over the whole tree
	std::size_t calls = 0;           // call nodes (tail calls included)
	std::uint64_t btf_exits = 0;     // a TF + BTF tracer's VM exits for them (model, when priced)
};

// Decodes data's records against its CODE chunks (then more_code, a vmlinux,
// when given) into the call tree, with symbolize's function bounds (tail
// calls, thunks). The TUI's trace viewer starts from here too.
CallTree decode_trace(const TraceData &data, const CodeSource *more_code, const Symbolizer &symbolize,
		      const DecodeOptions &options = {});

// decode_trace, then the rendering, with the clock the header names.
RenderedTrace render_trace(const TraceData &data, const CodeSource *more_code, const Symbolizer &symbolize,
			   Renderer render, const DecodeOptions &options = {});
// The same, the text written to sink as it is made (RenderedTrace::text
// stays empty).
RenderedTrace render_trace_to(const TraceData &data, const CodeSource *more_code, const Symbolizer &symbolize,
			      Renderer render, TextSink &sink, const DecodeOptions &options = {});

}  // namespace vtice::trace
