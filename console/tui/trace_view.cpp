#include "trace_view.hpp"

namespace vtice::tui {

void TraceView::set_tree(const TraceTree *tree)
{
	if (tree == tree_)
		return;
	tree_ = tree;
	folded_.clear();
	if (tree_)
		for (const auto &call : tree_->root.children)
			fold_deep(call, 0, kOpenDepth);
	rebuild();
}

void TraceView::fold_deep(const TraceNode &node, int depth, int open_depth)
{
	if (node.children.empty())
		return;
	if (depth + 1 >= open_depth)
		folded_.insert(&node);
	for (const auto &child : node.children)
		fold_deep(child, depth + 1, open_depth);
}

void TraceView::rebuild()
{
	rows_.clear();
	if (!tree_)
		return;
	for (const auto &call : tree_->root.children)
		add_rows(call, 0, npos);
}

void TraceView::add_rows(const TraceNode &node, int depth, std::size_t parent)
{
	std::size_t self = rows_.size();
	rows_.push_back({&node, depth, parent});
	if (folded(node))
		return;
	for (const auto &child : node.children)
		add_rows(child, depth + 1, self);
}

bool TraceView::foldable(std::size_t row) const
{
	return row < rows_.size() && !rows_[row].node->children.empty();
}

void TraceView::toggle(std::size_t row)
{
	if (!foldable(row))
		return;
	if (folded(*rows_[row].node))
		unfold(row);
	else
		fold(row);
}

void TraceView::fold(std::size_t row)
{
	if (!foldable(row))
		return;
	folded_.insert(rows_[row].node);
	rebuild();
}

void TraceView::unfold(std::size_t row)
{
	if (!foldable(row))
		return;
	folded_.erase(rows_[row].node);
	rebuild();
}

void TraceView::expand_all()
{
	folded_.clear();
	rebuild();
}

void TraceView::collapse_all()
{
	folded_.clear();
	if (tree_)
		for (const auto &call : tree_->root.children)
			fold_deep(call, 0, 1);
	rebuild();
}

std::size_t TraceView::reveal(const std::vector<const TraceNode *> &path)
{
	if (path.empty())
		return npos;
	for (std::size_t i = 0; i + 1 < path.size(); ++i)
		folded_.erase(path[i]);
	rebuild();
	for (std::size_t row = 0; row < rows_.size(); ++row)
		if (rows_[row].node == path.back())
			return row;
	return npos;
}

// Children run one after another: the last one that began by `instruction`
// and had not returned yet is the one running it.
std::vector<const TraceNode *> calls_at_instruction(const TraceTree &tree, std::uint64_t instruction)
{
	std::vector<const TraceNode *> path;
	if (!tree.instruction_clock)
		return path;
	const TraceNode *at = &tree.root;
	for (;;) {
		const TraceNode *inner = nullptr;
		for (const TraceNode &child : at->children)
			if (child.clock_start <= instruction && instruction < child.clock_end)
				inner = &child;
		if (!inner)
			return path;
		path.push_back(inner);
		at = inner;
	}
}

}  // namespace vtice::tui
