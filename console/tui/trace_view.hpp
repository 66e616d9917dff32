// Fold state of the trace pane's call tree, and the rows it leaves visible.
//
// Pure logic over a TraceTree; the pane only draws rows() and forwards keys.
// Fold state is keyed by node, so unfolding a call restores how its own
// children were folded before.
#pragma once

#include <cstddef>
#include <unordered_set>
#include <vector>

#include "trace_tree.hpp"

namespace vtice::tui {

class TraceView {
public:
	// Calls nested deeper than this start folded when a tree is shown.
	static constexpr int kOpenDepth = 3;

	struct Row {
		const TraceNode *node;
		int depth;  // 0 for top-level calls
		std::size_t parent;  // row index of the parent; npos at depth 0
	};
	static constexpr std::size_t npos = static_cast<std::size_t>(-1);

	// Shows a new tree (null clears); fold state resets when the tree changes.
	void set_tree(const TraceTree *tree);
	const TraceTree *tree() const { return tree_; }

	const std::vector<Row> &rows() const { return rows_; }
	bool folded(const TraceNode &node) const { return folded_.count(&node) != 0; }
	bool foldable(std::size_t row) const;

	void toggle(std::size_t row);
	void fold(std::size_t row);
	void unfold(std::size_t row);
	void expand_all();
	void collapse_all();
	// Unfolds the calls of path (outermost first) so that its last shows;
	// that one's row, or npos.
	std::size_t reveal(const std::vector<const TraceNode *> &path);

private:
	void fold_deep(const TraceNode &node, int depth, int open_depth);
	void rebuild();
	void add_rows(const TraceNode &node, int depth, std::size_t parent);

	const TraceTree *tree_ = nullptr;
	std::unordered_set<const TraceNode *> folded_;
	std::vector<Row> rows_;
};

}  // namespace vtice::tui
