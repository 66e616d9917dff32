#include "render.hpp"

namespace vtice::trace {

std::string node_name(const CallNode &node, const Symbolizer &symbolize)
{
	if (node.kind == NodeKind::Partial && symbolize) {
		if (auto hit = symbolize(node.entry); hit && !hit->name.empty())
			return printable_symbol(hit->name);
	}
	return format_address(node.entry, symbolize);
}

namespace {

template <void (*Write)(const CallTree &, const RenderOptions &, TextSink &)>
std::string to_string(const CallTree &tree, const RenderOptions &options)
{
	StringSink sink;
	Write(tree, options, sink);
	return sink.take();
}

}  // namespace

std::string render_graph(const CallTree &tree, const RenderOptions &options)
{
	return to_string<write_graph>(tree, options);
}

std::string render_folded(const CallTree &tree, const RenderOptions &options)
{
	return to_string<write_folded>(tree, options);
}

std::string render_perfetto(const CallTree &tree, const RenderOptions &options)
{
	return to_string<write_perfetto>(tree, options);
}

}  // namespace vtice::trace
