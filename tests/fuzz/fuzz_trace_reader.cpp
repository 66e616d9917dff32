// libFuzzer target: the trace reader, and the decoder and renderers on
// whatever prefix it accepts. Any input must give a value or an error.
#include <cstddef>
#include <cstdint>

#include "call_tree.hpp"
#include "code_source.hpp"
#include "render.hpp"
#include "symbol_table.hpp"
#include "trace_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	auto trace = vtice::trace::read_trace(std::span(data, size));
	if (!trace)
		return 0;
	vtice::trace::CodeMap code(trace->code);
	vtice::trace::SymbolTable symbols(trace->symbols);
	vtice::Disassembler disassembler;
	auto tree = vtice::trace::build_call_tree(trace->records, code, disassembler, symbols.symbolizer());
	vtice::trace::RenderOptions options{trace->header.tsc_khz, symbols.symbolizer()};
	vtice::trace::render_graph(tree, options);
	vtice::trace::render_folded(tree, options);
	vtice::trace::render_perfetto(tree, options);
	return 0;
}
