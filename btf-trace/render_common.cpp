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

}  // namespace vtice::trace
