// tree_ layer: instruction flow -> call/return tree per CPU, with TSC
// durations and instruction counts. Nodes live in one vector and link by
// index, so building the tree allocates nothing per branch but the node.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "instruction_flow.hpp"
#include "thunks.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice::trace {

inline constexpr std::uint32_t kNoNode = std::numeric_limits<std::uint32_t>::max();

enum class NodeKind : std::uint8_t {
	Root,       // one per CPU, not a function: its children are the top level
	Call,       // entered by call/syscall/int: entry is the target
	Interrupt,  // entered by an async event (VTICE_BRANCH_ASYNC)
	Partial,    // already running when the trace began: entry is an address inside it
	Lost,       // marker: `lost` records were dropped here
};

enum class NodeEnd : std::uint8_t {
	Open,      // no return seen before the trace ended
	Returned,  // its own ret/iret/sysret ended it
	Unwound,   // a return further down went straight past it (longjmp-like)
};

struct CallNode {
	std::uint64_t entry = 0;
	std::uint64_t return_address = 0;  // where its return lands; 0 when unknown (Partial)
	std::uint64_t start_tsc = 0, end_tsc = 0;
	std::uint64_t self_insns = 0;      // instructions run in this frame, children excluded
	std::uint64_t lost = 0;            // Lost markers only
	std::uint32_t parent = kNoNode, first_child = kNoNode, last_child = kNoNode, next_sibling = kNoNode;
	std::uint16_t cpu = 0;
	NodeKind kind = NodeKind::Call;
	NodeEnd end = NodeEnd::Open;
	bool tail_call = false;  // entered by a jump to a function's entry; ends with its parent

	bool is_leaf() const { return first_child == kNoNode; }
};

struct DecodeStats {
	std::uint64_t records = 0;
	std::uint64_t branches = 0;
	std::uint64_t unclassified = 0;        // no code at `from`: left out of the tree
	std::uint64_t unknown_blocks = 0;      // instruction count unknown for a block
	std::uint64_t btf_exits = 0;           // a TF + BTF tracer's VM exits for the known blocks (a model; priced only on request)
	std::uint64_t lost_records = 0;        // sum of lost markers
	std::uint64_t unwound_frames = 0;
	std::uint64_t unexpected_returns = 0;  // returned somewhere no frame expected
	std::uint64_t returns_above_root = 0;  // the trace began inside these callers
};

struct CallTree {
	std::vector<CallNode> nodes;
	std::vector<std::uint32_t> roots;  // one Root node per CPU seen, by CPU number
	DecodeStats stats;
	std::uint64_t first_tsc = 0, last_tsc = 0;
};

class CallTreeBuilder {
public:
	// functions, when given, tells where functions start and what they are
	// called: a jump to another function's entry is then a tail call and
	// nests like ftrace shows it, and thunks are looked through.
	explicit CallTreeBuilder(Symbolizer functions = {});
	void reserve(std::size_t nodes);
	void add(const FlowEvent &event);
	CallTree finish();

private:
	// A thunk being run on behalf of the frame at `depth`: what its exit
	// stands for, a call (with the return address the caller pushed) or
	// the frame's return.
	struct PendingThunk {
		std::size_t depth = 0;
		ThunkKind kind = ThunkKind::None;
		std::uint64_t return_address = 0;
		bool tail_call = false;
	};

	struct CpuStack {
		std::uint32_t root = kNoNode;
		std::vector<std::uint32_t> frames;  // open frames, innermost last
		std::vector<PendingThunk> thunks;   // innermost last; interrupts may nest one
		std::uint64_t last_tsc = 0;
	};

	// The CPU's stack, its Root node made at the first sight of it. Inline
	// with that first sight out of line: the call cost ~20 Ir per record.
	CpuStack &stack_for(std::uint16_t cpu, std::uint64_t tsc)
	{
		if (cpu < cpus_.size() && cpus_[cpu].root != kNoNode) [[likely]]
			return cpus_[cpu];
		return open_stack(cpu, tsc);
	}
	CpuStack &open_stack(std::uint16_t cpu, std::uint64_t tsc);
	std::uint32_t add_node(NodeKind kind, std::uint16_t cpu, std::uint64_t start_tsc, std::uint32_t parent);
	std::uint32_t top(const CpuStack &stack) const;
	void push(CpuStack &stack, NodeKind kind, const BranchEvent &event, std::uint64_t return_address);
	void open_partial(CpuStack &stack, const BranchEvent &event);
	void on_branch(CpuStack &stack, const FlowEvent &flow);
	void on_unclassified(CpuStack &stack, const BranchEvent &event);
	void push_tail_call(CpuStack &stack, const BranchEvent &event);
	void on_return(CpuStack &stack, const BranchEvent &event);
	bool is_tail_call(const CpuStack &stack, std::uint64_t target);
	ThunkKind thunk_at(std::uint64_t address);
	ThunkKind thunk_at_new(std::uint64_t address);
	PendingThunk *pending_thunk(CpuStack &stack);
	bool through_thunk(CpuStack &stack, const BranchEvent &event);
	void leave_thunk(CpuStack &stack, const BranchEvent &event);
	void pop(CpuStack &stack, NodeEnd end, std::uint64_t tsc);
	void pop_returned(CpuStack &stack, std::uint64_t tsc);
	void wrap_root(CpuStack &stack, const BranchEvent &event);

	CallTree tree_;
	Symbolizer functions_;
	FlatMap<std::uint64_t, bool> entries_;       // jump target -> is a function entry
	FlatMap<std::uint64_t, ThunkKind> thunks_;   // address -> the thunk it is in
	std::vector<CpuStack> cpus_;
	bool seen_ = false;
};

CallTree build_call_tree(std::span<const vtice_record> records, const CodeSource &code,
			 const Disassembler &disassembler, const Symbolizer &functions = {},
			 const DecodeOptions &options = {});

// Depth-first walk without recursion (a hostile trace may nest millions
// deep): visit(node_index, depth, leaving) is called on entry and on exit
// of every node below root; depth 0 is the top level.
template <class Visit>
void walk_tree(const CallTree &tree, std::uint32_t root, Visit &&visit)
{
	std::uint32_t node = tree.nodes[root].first_child;
	int depth = 0;
	while (node != kNoNode) {
		visit(node, depth, false);
		if (tree.nodes[node].first_child != kNoNode) {
			node = tree.nodes[node].first_child;
			depth++;
			continue;
		}
		while (node != kNoNode) {
			visit(node, depth, true);
			if (tree.nodes[node].next_sibling != kNoNode) {
				node = tree.nodes[node].next_sibling;
				break;
			}
			node = tree.nodes[node].parent;
			depth--;
			if (node == root)
				return;
		}
	}
}

}  // namespace vtice::trace
