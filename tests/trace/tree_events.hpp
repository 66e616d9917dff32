// Synthetic flow events for call-tree and renderer tests: each names its
// branch kind directly, so these tests need no code bytes.
#pragma once

#include "call_tree.hpp"

namespace vtice::trace::test {

inline FlowEvent flow_branch(std::uint64_t tsc, std::uint64_t from, std::uint64_t to, BranchKind kind,
			     std::uint64_t insns = 1, std::uint16_t cpu = 0, std::uint32_t flags = 0)
{
	FlowEvent flow;
	flow.event.type = EventType::Branch;
	flow.event.cpu = cpu;
	flow.event.flags = flags;
	flow.event.tsc = tsc;
	flow.event.from = from;
	flow.event.to = to;
	flow.event.info = BranchInfo{kind, 5, kind != BranchKind::None};
	flow.insns = insns;
	flow.insns_known = true;
	return flow;
}

inline FlowEvent flow_async(std::uint64_t tsc, std::uint64_t from, std::uint64_t to, std::uint16_t cpu = 0)
{
	FlowEvent flow = flow_branch(tsc, from, to, BranchKind::None, 0, cpu, VTICE_BRANCH_ASYNC);
	flow.event.info.classified = false;
	return flow;
}

inline FlowEvent flow_lost(std::uint64_t tsc, std::uint64_t count, std::uint16_t cpu = 0)
{
	FlowEvent flow;
	flow.event.type = EventType::Lost;
	flow.event.cpu = cpu;
	flow.event.tsc = tsc;
	flow.event.lost = count;
	return flow;
}

inline CallTree build(std::initializer_list<FlowEvent> events)
{
	CallTreeBuilder builder;
	for (const FlowEvent &event : events)
		builder.add(event);
	return builder.finish();
}

// The children of a node, as indices.
inline std::vector<std::uint32_t> children(const CallTree &tree, std::uint32_t node)
{
	std::vector<std::uint32_t> out;
	for (std::uint32_t c = tree.nodes[node].first_child; c != kNoNode; c = tree.nodes[c].next_sibling)
		out.push_back(c);
	return out;
}

}  // namespace vtice::trace::test
