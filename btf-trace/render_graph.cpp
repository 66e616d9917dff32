// function_graph text, laid out like ftrace's so kernel developers read it
// at a glance: "CPU) DURATION | indented calls". Format in docs/btf-trace.md.
#include <cstdio>

#include "render.hpp"

namespace vtice::trace {

namespace {

constexpr int kMaxIndent = 64;

class GraphWriter {
public:
	GraphWriter(const CallTree &tree, const RenderOptions &options, TextSink &sink)
		: tree_(tree), options_(options), out_(sink)
	{
	}
	void run();

private:
	void line(const CallNode &node, bool with_duration, int depth, const std::string &text);
	void enter(const CallNode &node, int depth);
	void leave(const CallNode &node, int depth);
	std::string notes(const CallNode &node, bool for_close) const;

	const CallTree &tree_;
	const RenderOptions &options_;
	SinkBuffer out_;
};

void GraphWriter::line(const CallNode &node, bool with_duration, int depth, const std::string &text)
{
	char prefix[64];
	std::uint64_t ticks = node.end_tsc - node.start_tsc;
	if (!with_duration)
		std::snprintf(prefix, sizeof(prefix), "%3u) %13s |  ", node.cpu, "");
	else if (options_.clock == TraceClock::Instructions)
		std::snprintf(prefix, sizeof(prefix), "%3u) %8llu insn |  ", node.cpu,
			      static_cast<unsigned long long>(ticks));
	else if (options_.tsc_khz)
		std::snprintf(prefix, sizeof(prefix), "%3u) %10.3f us |  ", node.cpu,
			      static_cast<double>(ticks) * 1000.0 / static_cast<double>(options_.tsc_khz));
	else
		std::snprintf(prefix, sizeof(prefix), "%3u) %10llu cy |  ", node.cpu,
			      static_cast<unsigned long long>(ticks));
	out_ += prefix;
	// Past kMaxIndent levels the depth is written out: indenting a hostile
	// million-deep trace would make the output quadratic in its size.
	if (depth > kMaxIndent) {
		out_.append(kMaxIndent * 2, ' ');
		out_ += "[depth " + std::to_string(depth) + "] ";
	} else {
		out_.append(static_cast<std::size_t>(depth) * 2, ' ');
	}
	out_ += text;
	out_ += '\n';
}

std::string GraphWriter::notes(const CallNode &node, bool for_close) const
{
	std::string text;
	if (node.kind == NodeKind::Partial && !for_close)
		text = "already running";
	const char *end = node.end == NodeEnd::Unwound ? "unwound" : node.end == NodeEnd::Open ? "still running" : nullptr;
	if (end && (for_close || node.is_leaf()))
		text += (text.empty() ? "" : ", ") + std::string(end);
	return text;
}

void GraphWriter::enter(const CallNode &node, int depth)
{
	if (node.kind == NodeKind::Lost) {
		line(node, false, depth,
		     node.lost ? "/* lost " + std::to_string(node.lost) + " records */"
			       : std::string("/* lost records here (how many is unknown) */"));
		return;
	}
	if (node.kind == NodeKind::Interrupt)
		line(node, false, depth, "==========> interrupted at " +
			     format_address(node.return_address, options_.symbolize));
	std::string name = node_name(node, options_.symbolize);
	std::string note = notes(node, false);
	if (node.is_leaf())
		line(node, node.end != NodeEnd::Open, depth, name + "();" + (note.empty() ? "" : " /* " + note + " */"));
	else
		line(node, false, depth, name + "() {" + (note.empty() ? "" : " /* " + note + " */"));
}

void GraphWriter::leave(const CallNode &node, int depth)
{
	if (node.kind == NodeKind::Lost)
		return;
	if (!node.is_leaf()) {
		std::string note = notes(node, true);
		line(node, node.end != NodeEnd::Open, depth,
		     "} /* " + node_name(node, options_.symbolize) + (note.empty() ? "" : ", " + note) + " */");
	}
	if (node.kind == NodeKind::Interrupt)
		line(node, false, depth, "<==========");
}

void GraphWriter::run()
{
	out_ += "# CPU  DURATION      FUNCTION CALLS\n";
	out_ += "# |     |   |         |   |   |   |\n";
	for (std::uint32_t root : tree_.roots) {
		walk_tree(tree_, root, [&](std::uint32_t index, int depth, bool leaving) {
			const CallNode &node = tree_.nodes[index];
			leaving ? leave(node, depth) : enter(node, depth);
		});
	}
	const DecodeStats &s = tree_.stats;
	char footer[200];
	std::snprintf(footer, sizeof(footer),
		      "# branches: %llu, lost records: %llu, unclassified: %llu, unwound frames: %llu\n",
		      static_cast<unsigned long long>(s.branches), static_cast<unsigned long long>(s.lost_records),
		      static_cast<unsigned long long>(s.unclassified),
		      static_cast<unsigned long long>(s.unwound_frames));
	out_ += footer;
}

}  // namespace

void write_graph(const CallTree &tree, const RenderOptions &options, TextSink &sink)
{
	GraphWriter(tree, options, sink).run();
}

}  // namespace vtice::trace
