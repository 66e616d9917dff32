// FlameGraph's folded format: "outer;inner;leaf weight" per line, weight =
// instructions run in the innermost frame. Equal stacks are merged and the
// lines sorted, so the output is stable for diffing.
#include <map>

#include "render.hpp"

namespace vtice::trace {

// FlameGraph splits a line at ';' and its last space: a name holding either
// would forge frames or a weight.
static std::string folded_frame(const std::string &name)
{
	std::string out;
	for (char c : name) {
		if (c == ';')
			out += "\\x3b";
		else if (c == ' ')
			out += "\\x20";
		else
			out.push_back(c);
	}
	return out;
}

std::string render_folded(const CallTree &tree, const RenderOptions &options)
{
	std::map<std::string, std::uint64_t> weights;
	std::vector<std::string> path;
	for (std::uint32_t root : tree.roots) {
		walk_tree(tree, root, [&](std::uint32_t index, int depth, bool leaving) {
			const CallNode &node = tree.nodes[index];
			if (node.kind == NodeKind::Lost)
				return;
			path.resize(static_cast<std::size_t>(depth));
			if (leaving)
				return;
			path.push_back(folded_frame(node_name(node, options.symbolize)));
			if (node.self_insns == 0)
				return;
			std::string stack;
			for (const std::string &name : path)
				stack += (stack.empty() ? "" : ";") + name;
			weights[stack] += node.self_insns;
		});
	}
	std::string out;
	for (const auto &[stack, weight] : weights)
		out += stack + " " + std::to_string(weight) + "\n";
	return out;
}

}  // namespace vtice::trace
