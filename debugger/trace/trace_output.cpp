#include "trace_output.hpp"

#include <set>

#include "call_tree.hpp"
#include "code_source.hpp"
#include "render.hpp"
#include "trace_file.hpp"

namespace vtice::dbg {

namespace {

std::vector<trace::CodeBlob> code_blobs(const TraceResult &t)
{
	std::vector<trace::CodeBlob> blobs;
	for (const auto &[address, bytes] : t.code)
		blobs.push_back({address, bytes});
	return blobs;
}

}  // namespace

TraceRendering render_trace(const TraceResult &t, const Symbolizer &symbolize)
{
	trace::CodeMap code(code_blobs(t));
	Disassembler disassembler;
	trace::CallTree tree = trace::build_call_tree(t.records, code, disassembler);
	TraceRendering out;
	for (const auto &node : tree.nodes) {
		out.decoded_instructions += node.self_insns;
		out.functions += node.kind == trace::NodeKind::Call;
	}
	out.graph = trace::render_graph(tree, trace::RenderOptions{0, symbolize});
	return out;
}

Result<void> write_trace_file(const std::string &path, const TraceResult &t, const SymbolSource *symbols,
			      std::int64_t slide)
{
	trace::TraceHeader header;
	header.kaslr_slide = static_cast<std::uint64_t>(slide);
	trace::TraceWriter writer(header);
	writer.add_records(t.records);
	for (const auto &[address, bytes] : t.code)
		writer.add_code(address, bytes);
	if (symbols) {
		// The functions the trace touched, so the file renders without a vmlinux.
		std::set<std::string> seen;
		std::vector<trace::TraceSymbol> table;
		for (const auto &r : t.records)
			for (std::uint64_t a : {r.u.branch.from, r.u.branch.to})
				if (auto hit = symbols->symbolize(a); hit && seen.insert(hit->name).second)
					table.push_back({hit->start, 0, hit->name});
		writer.add_symbols(table);
	}
	auto bytes = writer.finish();
	return trace::write_file(path, bytes);
}

}  // namespace vtice::dbg
