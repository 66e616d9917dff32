#include "trace_render.hpp"

namespace vtice::trace {

RenderedTrace render_trace(const TraceData &data, const CodeSource *more_code, const Symbolizer &symbolize,
			   Renderer render)
{
	CodeMap embedded(data.code);
	ChainedCodeSource code;
	code.add(&embedded);
	if (more_code)
		code.add(more_code);
	Disassembler disassembler;
	CallTree tree = build_call_tree(data.records, code, disassembler, symbolize);
	RenderedTrace out;
	for (const CallNode &node : tree.nodes) {
		out.instructions += node.self_insns;
		out.calls += node.kind == NodeKind::Call;
	}
	out.text = render(tree, RenderOptions{data.header.tsc_khz, symbolize, data.header.clock});
	return out;
}

}  // namespace vtice::trace
