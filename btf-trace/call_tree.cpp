#include "call_tree.hpp"

namespace vtice::trace {

CallTreeBuilder::CallTreeBuilder(Symbolizer functions) : functions_(std::move(functions))
{
	tree_.nodes.reserve(1024);
}

void CallTreeBuilder::reserve(std::size_t nodes) { tree_.nodes.reserve(nodes); }

// The helpers on the per-record path (add_node, top, push, pop,
// pop_returned) are declared inline: at -O2 GCC inlines little that is not,
// and their calls cost ~27 Ir per record.

// A new node, the last child of parent (kNoNode for a root); the caller
// fills in the rest.
inline std::uint32_t CallTreeBuilder::add_node(NodeKind kind, std::uint16_t cpu, std::uint64_t start_tsc,
					       std::uint32_t parent)
{
	std::uint32_t index = static_cast<std::uint32_t>(tree_.nodes.size());
	CallNode &node = tree_.nodes.emplace_back();
	node.kind = kind;
	node.cpu = cpu;
	node.start_tsc = start_tsc;
	node.parent = parent;
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

CallTreeBuilder::CpuStack &CallTreeBuilder::open_stack(std::uint16_t cpu, std::uint64_t tsc)
{
	if (cpu >= cpus_.size())
		cpus_.resize(std::size_t(cpu) + 1);
	CpuStack &stack = cpus_[cpu];
	stack.root = add_node(NodeKind::Root, cpu, tsc, kNoNode);
	return stack;
}

inline std::uint32_t CallTreeBuilder::top(const CpuStack &stack) const
{
	return stack.frames.empty() ? stack.root : stack.frames.back();
}

inline void CallTreeBuilder::push(CpuStack &stack, NodeKind kind, const BranchEvent &event,
				  std::uint64_t return_address)
{
	std::uint32_t index = add_node(kind, event.cpu, event.tsc, top(stack));
	CallNode &node = tree_.nodes[index];
	node.entry = event.to;
	node.return_address = return_address;
	stack.frames.push_back(index);
}

inline void CallTreeBuilder::pop(CpuStack &stack, NodeEnd end, std::uint64_t tsc)
{
	CallNode &node = tree_.nodes[stack.frames.back()];
	node.end = end;
	node.end_tsc = tsc;
	stack.frames.pop_back();
}

// A tail-called frame took over its parent's return: when it returns, the
// parent (and a chain of tail calls above it) returns with it.
inline void CallTreeBuilder::pop_returned(CpuStack &stack, std::uint64_t tsc)
{
	bool tail = tree_.nodes[stack.frames.back()].tail_call;
	pop(stack, NodeEnd::Returned, tsc);
	while (tail && !stack.frames.empty()) {
		tail = tree_.nodes[stack.frames.back()].tail_call;
		pop(stack, NodeEnd::Returned, tsc);
	}
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

// The lower canonical half of the x86-64 address space (user space).
static bool is_user(std::uint64_t address) { return address < 0x0000800000000000ull; }

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
		pop_returned(stack, event.tsc);
		if (stack.frames.empty())
			wrap_root(stack, event);
		return;
	}
	bool ended = false;
	while (stack.frames.size() > match + 1) {
		const CallNode &frame = tree_.nodes[stack.frames.back()];
		bool runs_ret = !ended && can_end(frame, event.info.kind);
		ended = ended || runs_ret;
		if (!runs_ret)
			tree_.stats.unwound_frames++;
		pop(stack, runs_ret ? NodeEnd::Returned : NodeEnd::Unwound, event.tsc);
	}
	if (ended) {
		tree_.stats.unwound_frames++;
		pop(stack, NodeEnd::Unwound, event.tsc);
	} else {
		pop_returned(stack, event.tsc);
	}
}

bool CallTreeBuilder::is_tail_call(const CpuStack &stack, std::uint64_t target)
{
	const bool *known = entries_.find(target);
	if (!known) {
		auto hit = functions_(target);
		known = &entries_.insert(target, hit && hit->offset == 0);
	}
	if (!*known || stack.frames.empty())
		return false;
	// A jump back to the entry of the function it is in is a loop, not a call.
	auto current = functions_(tree_.nodes[stack.frames.back()].entry);
	return !current || current->start != target;
}

ThunkKind CallTreeBuilder::thunk_at_new(std::uint64_t address)
{
	auto hit = functions_(address);
	return thunks_.insert(address, hit ? thunk_kind(hit->name) : ThunkKind::None);
}

// Twice per branch with symbols: the lookup inline, the symbol out of line
// (the calls cost ~26 Ir per record).
inline ThunkKind CallTreeBuilder::thunk_at(std::uint64_t address)
{
	if (const ThunkKind *known = thunks_.find(address)) [[likely]]
		return *known;
	return thunk_at_new(address);
}

// The thunk entered from the innermost frame, if that is where we are; one
// entered from a frame since left (an interrupt that ran a thunk and was
// unwound) is forgotten.
CallTreeBuilder::PendingThunk *CallTreeBuilder::pending_thunk(CpuStack &stack)
{
	while (!stack.thunks.empty() && stack.thunks.back().depth > stack.frames.size())
		stack.thunks.pop_back();
	if (stack.thunks.empty() || stack.thunks.back().depth != stack.frames.size())
		return nullptr;
	return &stack.thunks.back();
}

// Control leaves a thunk: an indirect thunk reaches the real callee, which
// becomes the node (called, or tail-called when the thunk was jumped to); a
// return thunk's exit is the return of the frame that jumped to it.
void CallTreeBuilder::leave_thunk(CpuStack &stack, const BranchEvent &event)
{
	PendingThunk thunk = stack.thunks.back();
	stack.thunks.pop_back();
	if (thunk.kind == ThunkKind::Return) {
		on_return(stack, event);
		return;
	}
	push(stack, NodeKind::Call, event, thunk.return_address);
	tree_.nodes[stack.frames.back()].tail_call = thunk.tail_call;
}

// Looks through thunks; true when the branch was one into, inside or out of
// a thunk and has been accounted for.
bool CallTreeBuilder::through_thunk(CpuStack &stack, const BranchEvent &event)
{
	ThunkKind to = thunk_at(event.to);
	if (thunk_at(event.from) != ThunkKind::None && pending_thunk(stack)) {
		// Inside: the retpoline's own call, ret and speculation trap.
		if (to == ThunkKind::None)
			leave_thunk(stack, event);
		return true;
	}
	if (to == ThunkKind::None)
		return false;
	PendingThunk thunk{stack.frames.size(), to, 0, false};
	switch (event.info.kind) {
	case BranchKind::Call:
		thunk.return_address = event.from + event.info.length;
		break;
	case BranchKind::Jmp:
	case BranchKind::Jcc:
		// A jump to an indirect thunk is a tail call through it.
		thunk.return_address = tree_.nodes[stack.frames.back()].return_address;
		thunk.tail_call = true;
		break;
	default:
		return false;
	}
	stack.thunks.push_back(thunk);
	return true;
}

// The first branch seen on a CPU: the code it left was already running.
void CallTreeBuilder::open_partial(CpuStack &stack, const BranchEvent &event)
{
	std::uint32_t partial = add_node(NodeKind::Partial, event.cpu, event.tsc, stack.root);
	tree_.nodes[partial].entry = event.from;
	stack.frames.push_back(partial);
}

// No code at `from`. A kernel trace has no user code: a branch from the user
// half into the kernel half is a syscall or exception entry. Its return
// address is unknown (0), so the sysret/iret back pops it as the innermost frame.
void CallTreeBuilder::on_unclassified(CpuStack &stack, const BranchEvent &event)
{
	if (is_user(event.from) && !is_user(event.to))
		push(stack, NodeKind::Call, event, 0);
	else
		tree_.stats.unclassified++;
}

// The callee of a tail call returns for the frame that jumped to it.
void CallTreeBuilder::push_tail_call(CpuStack &stack, const BranchEvent &event)
{
	push(stack, NodeKind::Call, event, tree_.nodes[stack.frames.back()].return_address);
	tree_.nodes[stack.frames.back()].tail_call = true;
}

// Always inlined into add(), its one caller: the call cost ~16 Ir per record,
// and GCC's size heuristic alone let it go with any small edit.
[[gnu::always_inline]] inline void CallTreeBuilder::on_branch(CpuStack &stack, const FlowEvent &flow)
{
	const BranchEvent &event = flow.event;
	if (stack.frames.empty())
		open_partial(stack, event);
	tree_.nodes[stack.frames.back()].self_insns += flow.insns;
	if (event.async()) {
		push(stack, NodeKind::Interrupt, event, event.from);
		return;
	}
	if (!event.info.classified) {
		on_unclassified(stack, event);
		return;
	}
	if (functions_ && through_thunk(stack, event))
		return;
	switch (event.info.kind) {
	case BranchKind::Call:
	case BranchKind::Syscall:
	case BranchKind::Int:
		push(stack, NodeKind::Call, event, event.from + event.info.length);
		break;
	case BranchKind::Ret:
	case BranchKind::Iret:
	case BranchKind::Sysret:
		on_return(stack, event);
		break;
	case BranchKind::Jmp:
	case BranchKind::Jcc:
		if (functions_ && is_tail_call(stack, event.to))
			push_tail_call(stack, event);
		break;
	default:
		break;
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
		CallNode &marker = tree_.nodes[add_node(NodeKind::Lost, event.cpu, event.tsc, top(stack))];
		marker.lost = event.lost;
		marker.end_tsc = event.tsc;
		marker.end = NodeEnd::Returned;
		tree_.stats.lost_records += event.lost;
		return;
	}
	tree_.stats.branches++;
	if (!flow.insns_known)
		tree_.stats.unknown_blocks++;
	tree_.stats.btf_exits += flow.btf_exits;
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
			 const Disassembler &disassembler, const Symbolizer &functions, const DecodeOptions &options)
{
	BranchClassifier classifier(code, disassembler);
	FlowDecoder flow(classifier, options);
	CallTreeBuilder builder(functions);
	// At most one node per record; real traces are about half calls.
	builder.reserve(records.size() / 2);
	for (const vtice_record &record : records)
		builder.add(flow.next(make_event(record, classifier)));
	return builder.finish();
}

}  // namespace vtice::trace
