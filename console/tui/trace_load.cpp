#include "trace_load.hpp"

#include <vector>

#include "render.hpp"
#include "symbol_table.hpp"
#include "trace_file.hpp"
#include "trace_render.hpp"

namespace vtice::tui {
namespace {

std::string node_note(const trace::CallNode &node)
{
	std::string note;
	if (node.kind == trace::NodeKind::Partial)
		note = "already running";
	if (node.end == trace::NodeEnd::Unwound)
		note += (note.empty() ? "" : ", ") + std::string("unwound");
	if (node.end == trace::NodeEnd::Open)
		note += (note.empty() ? "" : ", ") + std::string("still running");
	return note;
}

TraceNode make_node(const trace::CallNode &node, std::uint64_t tsc_khz, const Symbolizer &symbolize)
{
	TraceNode out;
	out.clock_start = node.kind == trace::NodeKind::Partial ? 0 : node.start_tsc;
	if (node.kind == trace::NodeKind::Lost) {
		out.clock_end = out.clock_start;  // a marker: it ran nothing
		out.name = "[lost]";
		out.note = "lost " + std::to_string(node.lost) + " records";
		out.timed = false;
		return out;
	}
	out.name = trace::node_name(node, symbolize);
	if (node.kind == trace::NodeKind::Interrupt)
		out.name = "interrupt " + out.name;
	out.address = node.entry;
	out.note = node_note(node);
	out.instructions = node.self_insns;  // the walk adds the children's
	if (node.end != trace::NodeEnd::Open)
		out.clock_end = node.end_tsc;
	if (!tsc_khz) {
		out.duration = node.self_insns;
		return out;
	}
	out.timed = node.end != trace::NodeEnd::Open;
	std::uint64_t ticks = node.end_tsc - node.start_tsc;
	// 128-bit so a long trace at a high TSC rate cannot overflow the product.
	out.duration = static_cast<std::uint64_t>(static_cast<unsigned __int128>(ticks) * 1000000 / tsc_khz);
	return out;
}

// One CPU's root: walk_tree visits nodes depth first; `path` holds the open
// nodes from the CPU's node down, each living in its parent's children.
void convert_root(const trace::CallTree &tree, std::uint32_t root, TraceNode &cpu,
		  std::uint64_t tsc_khz, const Symbolizer &symbolize)
{
	std::vector<TraceNode *> path{&cpu};
	trace::walk_tree(tree, root, [&](std::uint32_t index, int depth, bool leaving) {
		if (depth >= kMaxTraceDepth) {
			TraceNode &deepest = *path.back();
			if (leaving)
				return;
			deepest.instructions += tree.nodes[index].self_insns;
			if (!tsc_khz)
				deepest.duration = deepest.instructions;
			if (deepest.note.find("deeper") == std::string::npos)
				deepest.note += (deepest.note.empty() ? "" : ", ") + std::string("deeper calls cut");
			return;
		}
		if (leaving) {
			// Inclusive counts: a finished call adds its total to its caller.
			std::uint64_t total = path.back()->instructions;
			path.pop_back();
			path.back()->instructions += total;
			if (!tsc_khz)
				path.back()->duration = path.back()->instructions;
			return;
		}
		TraceNode &parent = *path[static_cast<std::size_t>(depth)];
		parent.children.push_back(make_node(tree.nodes[index], tsc_khz, symbolize));
		path.resize(static_cast<std::size_t>(depth) + 1);
		path.push_back(&parent.children.back());
	});
}

}  // namespace

TraceTree convert_call_tree(const trace::CallTree &tree, std::uint64_t tsc_khz, const Symbolizer &symbolize)
{
	TraceTree out;
	out.unit = tsc_khz ? "ns" : "insn";
	out.instruction_clock = !tsc_khz;
	out.root.timed = false;
	bool one_cpu = tree.roots.size() == 1;
	for (std::uint32_t root : tree.roots) {
		if (root == trace::kNoNode || root >= tree.nodes.size())
			continue;
		if (one_cpu) {
			convert_root(tree, root, out.root, tsc_khz, symbolize);
			continue;
		}
		TraceNode cpu;
		cpu.name = "cpu" + std::to_string(tree.nodes[root].cpu);
		cpu.timed = false;
		convert_root(tree, root, cpu, tsc_khz, symbolize);
		out.root.children.push_back(std::move(cpu));
	}
	return out;
}

Result<LoadedTrace> load_trace_file(const std::string &path, const Symbolizer &symbolize)
{
	auto data = trace::read_trace_file(path);
	if (!data)
		return data.error();
	trace::SymbolTable embedded(data->symbols);
	Symbolizer names = [&](std::uint64_t address) {
		auto hit = embedded.lookup(address);
		return hit || !symbolize ? hit : symbolize(address);
	};
	// The same tree `vtice report` renders: tail calls nested, thunks looked through.
	trace::CallTree tree = trace::decode_trace(*data, nullptr, names);
	LoadedTrace loaded{convert_call_tree(tree, data->header.tsc_khz, names), {}};
	loaded.tree.title = path.substr(path.find_last_of('/') + 1);
	if (data->error)
		loaded.note = data->error->to_string() + "; showing the records before it";
	return loaded;
}

}  // namespace vtice::tui
