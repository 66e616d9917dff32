#include "call_tree.hpp"

namespace vtice::trace {

CallTreeBuilder::CallTreeBuilder() { tree_.nodes.reserve(1024); }

std::uint32_t CallTreeBuilder::add_node(CallNode node, std::uint32_t parent)
{
	std::uint32_t index = static_cast<std::uint32_t>(tree_.nodes.size());
	node.parent = parent;
	tree_.nodes.push_back(node);
	if (parent != kNoNode) {
		CallNode &p = tree_.nodes[parent];
		if (p.last_child == kNoNode)
			p.first_child = index;
		else
			tree_.nodes[p.last_child].next_sibling = index;
		p.last_child = index;
	}
	return index;
}

CallTreeBuilder::CpuStack &CallTreeBuilder::stack_for(std::uint16_t cpu, std::uint64_t tsc)
{
	if (cpu >= cpus_.size())
		cpus_.resize(std::size_t(cpu) + 1);
	CpuStack &stack = cpus_[cpu];
	if (stack.root == kNoNode) {
		CallNode root;
		root.kind = NodeKind::Root;
		root.cpu = cpu;
		root.start_tsc = tsc;
		stack.root = add_node(root, kNoNode);
	}
	return stack;
}

std::uint32_t CallTreeBuilder::top(const CpuStack &stack) const
{
	return stack.frames.empty() ? stack.root : stack.frames.back();
}

void CallTreeBuilder::push(CpuStack &stack, NodeKind kind, const BranchEvent &event,
			   std::uint64_t return_address)
{
	CallNode node;
	node.kind = kind;
	node.cpu = event.cpu;
	node.entry = event.to;
	node.return_address = return_address;
	node.start_tsc = event.tsc;
	stack.frames.push_back(add_node(node, top(stack)));
}

void CallTreeBuilder::pop(CpuStack &stack, NodeEnd end, std::uint64_t tsc)
{
	CallNode &node = tree_.nodes[stack.frames.back()];
	node.end = end;
	node.end_tsc = tsc;
	stack.frames.pop_back();
}

// The trace began inside the function we just left: its caller, where the
// return landed, becomes a Partial frame around everything seen so far.
void CallTreeBuilder::wrap_root(CpuStack &stack, const BranchEvent &event)
{
	CallNode &root = tree_.nodes[stack.root];
	CallNode wrapper;
	wrapper.kind = NodeKind::Partial;
	wrapper.cpu = event.cpu;
	wrapper.entry = event.to;
	wrapper.start_tsc = root.first_child != kNoNode ? tree_.nodes[root.first_child].start_tsc : event.tsc;
	wrapper.first_child = root.first_child;
	wrapper.last_child = root.last_child;
	wrapper.parent = stack.root;
	std::uint32_t index = static_cast<std::uint32_t>(tree_.nodes.size());
	for (std::uint32_t child = root.first_child; child != kNoNode; child = tree_.nodes[child].next_sibling)
		tree_.nodes[child].parent = index;
	tree_.nodes.push_back(wrapper);
	CallNode &root_again = tree_.nodes[stack.root];  // push_back may have moved it
	root_again.first_child = root_again.last_child = index;
	stack.frames.push_back(index);
	tree_.stats.returns_above_root++;
}

// Which of the frames a return pops actually ran the ret: the innermost one
// that a ret could end. An interrupt frame is only ended by iret, so a ret
// that lands below it means its iret was lost and it was merely unwound.
static bool can_end(const CallNode &frame, BranchKind kind)
{
	return kind == BranchKind::Iret || frame.kind != NodeKind::Interrupt;
}

void CallTreeBuilder::on_return(CpuStack &stack, const BranchEvent &event)
{
	// Innermost frame expecting this return address; frames above it were skipped.
	std::size_t match = stack.frames.size();
	for (std::size_t i = stack.frames.size(); i-- > 0;) {
		const CallNode &frame = tree_.nodes[stack.frames[i]];
		if (frame.return_address != 0 && frame.return_address == event.to) {
			match = i;
			break;
		}
	}
	if (match == stack.frames.size()) {
		if (tree_.nodes[stack.frames.back()].return_address != 0)
			tree_.stats.unexpected_returns++;
		pop(stack, NodeEnd::Returned, event.tsc);
		if (stack.frames.empty())
			wrap_root(stack, event);
		return;
	}
	bool ended = false;
	while (stack.frames.size() > match) {
		const CallNode &frame = tree_.nodes[stack.frames.back()];
		bool runs_ret = !ended && (can_end(frame, event.info.kind) || stack.frames.size() == match + 1);
		ended = ended || runs_ret;
		if (!runs_ret)
			tree_.stats.unwound_frames++;
		pop(stack, runs_ret ? NodeEnd::Returned : NodeEnd::Unwound, event.tsc);
	}
}

void CallTreeBuilder::on_branch(CpuStack &stack, const FlowEvent &flow)
{
	const BranchEvent &event = flow.event;
	if (stack.frames.empty()) {
		CallNode partial;
		partial.kind = NodeKind::Partial;
		partial.cpu = event.cpu;
		partial.entry = event.from;
		partial.start_tsc = event.tsc;
		stack.frames.push_back(add_node(partial, stack.root));
	}
	tree_.nodes[stack.frames.back()].self_insns += flow.insns;
	if (event.async()) {
		push(stack, NodeKind::Interrupt, event, event.from);
		return;
	}
	if (!event.info.classified) {
		tree_.stats.unclassified++;
		return;
	}
	std::uint64_t next = event.from + event.info.length;
	switch (event.info.kind) {
	case BranchKind::Call:
	case BranchKind::Syscall:
	case BranchKind::Int:
		push(stack, NodeKind::Call, event, next);
		break;
	case BranchKind::Ret:
	case BranchKind::Iret:
	case BranchKind::Sysret:
		on_return(stack, event);
		break;
	default:
		break;  // jmp/jcc stay in the frame; tail calls are charged to the caller
	}
}

void CallTreeBuilder::add(const FlowEvent &flow)
{
	const BranchEvent &event = flow.event;
	tree_.stats.records++;
	if (event.type == EventType::Other || event.type == EventType::Resync)
		return;
	if (!seen_)
		tree_.first_tsc = event.tsc;
	seen_ = true;
	tree_.last_tsc = event.tsc;
	CpuStack &stack = stack_for(event.cpu, event.tsc);
	stack.last_tsc = event.tsc;
	if (event.type == EventType::Lost) {
		CallNode marker;
		marker.kind = NodeKind::Lost;
		marker.cpu = event.cpu;
		marker.lost = event.lost;
		marker.start_tsc = marker.end_tsc = event.tsc;
		marker.end = NodeEnd::Returned;
		add_node(marker, top(stack));
		tree_.stats.lost_records += event.lost;
		return;
	}
	tree_.stats.branches++;
	if (!flow.insns_known)
		tree_.stats.unknown_blocks++;
	on_branch(stack, flow);
}

CallTree CallTreeBuilder::finish()
{
	for (std::size_t cpu = 0; cpu < cpus_.size(); cpu++) {
		CpuStack &stack = cpus_[cpu];
		if (stack.root == kNoNode)
			continue;
		while (!stack.frames.empty())
			pop(stack, NodeEnd::Open, stack.last_tsc);
		tree_.nodes[stack.root].end_tsc = stack.last_tsc;
		tree_.roots.push_back(stack.root);
	}
	return std::move(tree_);
}

CallTree build_call_tree(std::span<const vtice_record> records, const CodeSource &code,
			 const Disassembler &disassembler)
{
	BranchClassifier classifier(code, disassembler);
	FlowDecoder flow(classifier);
	CallTreeBuilder builder;
	for (const vtice_record &record : records)
		builder.add(flow.next(make_event(record, classifier)));
	return builder.finish();
}

}  // namespace vtice::trace
