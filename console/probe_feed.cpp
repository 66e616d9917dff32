#include "probe_feed.hpp"

#include <algorithm>

namespace vtice::console {

void ProbeFeed::feed(const std::vector<std::vector<vtice_record>> &per_cpu)
{
	std::vector<trace::SyscallEvent> events;
	for (const auto &recs : per_cpu) {
		auto evs = trace::decode_syscall_records(recs, decode_);
		events.insert(events.end(), evs.begin(), evs.end());
	}
	feed_events(std::move(events));
}

void ProbeFeed::feed_events(std::vector<trace::SyscallEvent> events)
{
	std::stable_sort(events.begin(), events.end(), [](auto &a, auto &b) { return a.tsc < b.tsc; });
	for (const trace::SyscallEvent &ev : events) {
		if (runtime_.exited())
			return;
		stats_.events++;
		if (ev.probe_hit) {
			probes::ProbeEvent hit = convert(ev);
			hit.kind = probes::PointKind::FnEntry;
			hit.address = ev.nr;
			runtime_.on_event(hit);
			continue;	// no syscall: nothing to pair
		}
		if (ev.enter)
			runtime_.on_event(convert(ev));
		for (const trace::SyscallCall &call : pairer_.add(ev)) {
			if (!call.exit)
				continue;	// an entry that never returned: nothing to fire
			if (!call.enter) {
				stats_.returns_unpaired++;
				continue;
			}
			probes::ProbeEvent ret = convert(*call.exit);
			ret.kind = probes::PointKind::SyscallReturn;
			ret.nr = call.enter->nr;
			ret.args = call.enter->args;
			ret.retval = static_cast<std::int64_t>(call.exit->ret);
			runtime_.on_event(ret);
		}
	}
}

probes::ProbeEvent ProbeFeed::convert(const trace::SyscallEvent &ev) const
{
	probes::ProbeEvent out;
	out.nr = ev.nr;
	out.args = ev.args;
	out.comm = ev.comm;
	out.pid = ev.tgid;	// bpftrace's pid is the process,
	out.tid = ev.pid;	// its tid the kernel's pid
	out.cpu = ev.cpu;
	out.nsecs = to_ns_(ev.tsc);
	return out;
}

}  // namespace vtice::console
