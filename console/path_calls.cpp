#include "path_calls.hpp"

#include <algorithm>

#include "trace/trace_output.hpp"

namespace vtice::console {

namespace {

bool is_stop(const vtice_record &r)
{
	return r.type == VTICE_REC_TRACE_STOP;
}

bool is_step(const vtice_record &r)
{
	return r.type == VTICE_REC_STEP || r.type == VTICE_REC_STEP_REGS || r.type == VTICE_REC_STEP_MEM;
}

std::size_t count_stops(const std::vector<vtice_record> &records)
{
	return static_cast<std::size_t>(std::count_if(records.begin(), records.end(), is_stop));
}

}  // namespace

std::vector<PathCall> PathCallCollector::feed(const std::vector<std::vector<vtice_record>> &per_cpu)
{
	std::size_t ready = count_stops(pending_);
	for (const auto &recs : per_cpu) {
		for (const auto &ev : trace::decode_syscall_records(recs, stats_))
			(ev.enter ? enters_ : exits_).push_back(ev);
		for (const auto &r : recs)
			if (r.type == VTICE_REC_BRANCH || r.type == VTICE_REC_LOST || is_stop(r) || is_step(r))
				pending_.push_back(r);
	}
	std::stable_sort(pending_.begin(), pending_.end(),
			 [](const vtice_record &a, const vtice_record &b) { return a.tsc < b.tsc; });
	return complete(ready);
}

std::vector<PathCall> PathCallCollector::finish()
{
	std::vector<PathCall> calls = complete(count_stops(pending_));
	if (!pending_.empty() || !enters_.empty())
		calls.push_back(take_call(pending_.size()));
	return calls;
}

std::vector<PathCall> PathCallCollector::complete(std::size_t stops)
{
	std::vector<PathCall> calls;
	while (stops--) {
		auto stop = std::find_if(pending_.begin(), pending_.end(), is_stop);
		calls.push_back(take_call(static_cast<std::size_t>(stop - pending_.begin())));
	}
	return calls;
}

// The records before pending_[end], and the stop there if there is one.
PathCall PathCallCollector::take_call(std::size_t end)
{
	PathCall call;
	for (auto r = pending_.begin(); r != pending_.begin() + static_cast<std::ptrdiff_t>(end); ++r) {
		if (is_step(*r) || r->type == VTICE_REC_LOST)
			call.steps.push_back(*r);
		if (!is_step(*r))
			call.records.push_back(*r);
	}
	for (const auto &r : call.records)
		call.lost += r.type == VTICE_REC_LOST ? r.u.lost.count : 0;
	call.moves = dbg::as_one_timeline(call.records);
	if (end < pending_.size()) {
		const vtice_record &stop = pending_[end];
		call.stop = stop.flags;
		call.task = stop.u.raw[0];
		call.insns = stop.u.raw[1];
		end++;
	}
	pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(end));
	if (!enters_.empty()) {
		call.call.enter = enters_.front();
		enters_.pop_front();
	}
	if (call.stop == VTICE_TRACE_STOP_SYSRET && !exits_.empty()) {
		call.call.exit = exits_.front();
		exits_.pop_front();
	}
	return call;
}

}  // namespace vtice::console
