#include "trace_render.hpp"

namespace vtice::trace {

CallTree decode_trace(const TraceData &data, const CodeSource *more_code, const Symbolizer &symbolize,
		      const DecodeOptions &options)
{
	CodeMap embedded(data.code);
	ChainedCodeSource code;
	code.add(&embedded);
	if (more_code)
		code.add(more_code);
	Disassembler disassembler;
	return build_call_tree(data.records, code, disassembler, symbolize, options);
}

RenderedTrace render_trace(const TraceData &data, const CodeSource *more_code, const Symbolizer &symbolize,
			   Renderer render, const DecodeOptions &options)
{
	StringSink sink;
	RenderedTrace out = render_trace_to(data, more_code, symbolize, render, sink, options);
	out.text = sink.take();
	return out;
}

RenderedTrace render_trace_to(const TraceData &data, const CodeSource *more_code, const Symbolizer &symbolize,
			      Renderer render, TextSink &sink, const DecodeOptions &options)
{
	CallTree tree = decode_trace(data, more_code, symbolize, options);
	RenderedTrace out;
	for (const CallNode &node : tree.nodes) {
		out.instructions += node.self_insns;
		out.calls += node.kind == NodeKind::Call;
	}
	out.btf_exits = tree.stats.btf_exits;
	render(tree, RenderOptions{data.header.tsc_khz, symbolize, data.header.clock}, sink);
	return out;
}

}  // namespace vtice::trace
