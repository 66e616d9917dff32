// FlameGraph's folded format: "outer;inner;leaf weight" per line, weight =
// instructions run in the innermost frame.
//
// Equal stacks are merged through a trie of frames, so memory grows with
// the number of distinct stacks, not with their total length, and lines come
// out in a stable order (frame by frame, by name) for diffing. A stack is
// cut at kMaxFrames, perf's default (kernel.perf_event_max_stack): its last
// frame, "[deeper_frames]", weighs all that ran that deep or deeper, so a hostile
// million-deep recursion folds into a few lines instead of output quadratic in
// its depth. That name has no space: FlameGraph reads a line's last space as
// the start of its weight.
#include <algorithm>
#include <unordered_map>

#include "render.hpp"
#include "vtice/escape.hpp"

namespace vtice::trace {

namespace {

constexpr std::size_t kMaxFrames = 127;
constexpr const char *kDeeper = "[deeper_frames]";

class StackTrie {
public:
	StackTrie() { nodes_.push_back({}); }

	// The child of parent named name, made on first use.
	std::uint32_t child(std::uint32_t parent, const std::string &name)
	{
		std::string key = std::to_string(parent) + ';' + name;
		auto [it, added] = index_.try_emplace(std::move(key), static_cast<std::uint32_t>(nodes_.size()));
		if (added) {
			nodes_.push_back({name, 0, {}});
			nodes_[parent].children.push_back(it->second);
		}
		return it->second;
	}
	void weigh(std::uint32_t node, std::uint64_t weight) { nodes_[node].weight += weight; }

	// One line per stack that ran instructions, depth first, children by name.
	void write(SinkBuffer &out)
	{
		std::string path;
		write_below(0, path, out);
	}

private:
	struct Node {
		std::string name;
		std::uint64_t weight = 0;
		std::vector<std::uint32_t> children;
	};

	// Recursion is bounded by kMaxFrames + 1.
	void write_below(std::uint32_t node, std::string &path, SinkBuffer &out)
	{
		auto &children = nodes_[node].children;
		std::sort(children.begin(), children.end(),
			  [this](std::uint32_t a, std::uint32_t b) { return nodes_[a].name < nodes_[b].name; });
		for (std::uint32_t c : children) {
			std::size_t before = path.size();
			path += (before ? ";" : "") + nodes_[c].name;
			if (nodes_[c].weight) {
				out += path;
				out += " " + std::to_string(nodes_[c].weight) + "\n";
			}
			write_below(c, path, out);
			path.resize(before);
		}
	}

	std::vector<Node> nodes_;
	std::unordered_map<std::string, std::uint32_t> index_;
};

}  // namespace

void write_folded(const CallTree &tree, const RenderOptions &options, TextSink &sink)
{
	StackTrie trie;
	std::vector<std::uint32_t> path;	// the trie nodes of the frames entered, at most kMaxFrames
	for (std::uint32_t root : tree.roots) {
		walk_tree(tree, root, [&](std::uint32_t index, int depth, bool leaving) {
			const CallNode &node = tree.nodes[index];
			if (node.kind == NodeKind::Lost || leaving)
				return;
			// The kMaxFrames-th frame and all below it are one.
			bool cut = static_cast<std::size_t>(depth) >= kMaxFrames - 1;
			path.resize(cut ? kMaxFrames - 1 : static_cast<std::size_t>(depth));
			std::uint32_t parent = path.empty() ? 0 : path.back();
			std::uint32_t here =
				trie.child(parent, cut ? kDeeper : folded_frame(node_name(node, options.symbolize)));
			path.push_back(here);
			trie.weigh(here, node.self_insns);
		});
	}
	SinkBuffer out(sink);
	trie.write(out);
}

std::string folded_frame(std::string_view name)
{
	std::string out;
	for (char c : escape_text(name, Layout::Field)) {
		if (c == ';')
			out += "\\x3b";
		else if (c == ' ')
			out += "\\x20";
		else
			out.push_back(c);
	}
	return out;
}

}  // namespace vtice::trace
