#include "probe_feed.hpp"

#include <algorithm>

#include "vtice/escape.hpp"

namespace vtice::console {

void ProbeFeed::feed(const std::vector<std::vector<vtice_record>> &per_cpu)
{
	std::vector<trace::SyscallEvent> events;
	std::vector<trace::ProfileSample> samples;
	for (const auto &recs : per_cpu) {
		stats_.records += recs.size();
		auto evs = trace::decode_syscall_records(recs, decode_);
		events.insert(events.end(), evs.begin(), evs.end());
		trace::ProfileDecodeStats these;	// their LOST count is decode_'s: the same records
		auto got = trace::decode_profile_records(recs, these);
		samples_.samples += these.samples;
		samples_.malformed += these.malformed;
		samples.insert(samples.end(), std::make_move_iterator(got.begin()), std::make_move_iterator(got.end()));
	}
	feed_events(std::move(events), std::move(samples));
}

void ProbeFeed::feed_events(std::vector<trace::SyscallEvent> events, std::vector<trace::ProfileSample> samples)
{
	auto by_tsc = [](auto &a, auto &b) { return a.tsc < b.tsc; };
	std::stable_sort(events.begin(), events.end(), by_tsc);
	std::stable_sort(samples.begin(), samples.end(), by_tsc);
	std::size_t e = 0, s = 0;
	while ((e < events.size() || s < samples.size()) && !runtime_.exited()) {
		stats_.events++;
		if (s == samples.size() || (e < events.size() && events[e].tsc <= samples[s].tsc))
			on_syscall_event(events[e++]);
		else
			on_sample(samples[s++]);
	}
}

// A fn:/addr: hit at its address, or a watch: hit after its access (records.h).
void ProbeFeed::on_probe_hit(const trace::SyscallEvent &ev)
{
	probes::ProbeEvent hit = convert(ev);
	bool watch = ev.watch_access != 0;
	hit.kind = watch ? probes::PointKind::Watch : probes::PointKind::FnEntry;
	hit.address = ev.nr;
	hit.retval = static_cast<std::int64_t>(ev.ret);	// RAX: the return value at a fn:NAME:return
	hit.more_regs = ev.more_regs;
	std::copy(ev.values.begin(), ev.values.end(), hit.values.begin());
	hit.values_unreadable = ev.values_unreadable;
	hit.watch_addr = ev.watch_addr;
	hit.watch_access = (ev.watch_access & VTICE_PROBE_HIT_WRITE ? probes::kWatchWrite : 0) |
			   (ev.watch_access & VTICE_PROBE_HIT_READ ? probes::kWatchRead : 0);
	if (function_name_)
		hit.func = function_name_(watch ? ev.watch_ip : ev.nr);
	if (stack_text_ && ev.rsp)
		hit.kstack = stack_text_(trace::probe_hit_sample(ev));
	runtime_.on_event(hit);
}

void ProbeFeed::on_syscall_event(const trace::SyscallEvent &ev)
{
	if (ev.probe_hit) {
		on_probe_hit(ev);
		return;	// no syscall: nothing to pair
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
		ret.str = escape_text(call.enter->str, Layout::Field);	// as the entry copied it
		ret.retval = static_cast<std::int64_t>(call.exit->ret);
		runtime_.on_event(ret);
	}
}

void ProbeFeed::on_sample(const trace::ProfileSample &s)
{
	probes::ProbeEvent ev;
	ev.kind = probes::PointKind::Profile;
	ev.comm = escape_text(s.has_task ? s.comm : std::string(), Layout::Field);
	ev.pid = s.tgid;
	ev.tid = s.pid;
	ev.cpu = s.cpu;
	ev.nsecs = to_ns_(s.tsc);
	if (stack_text_)
		ev.kstack = stack_text_(s);
	runtime_.on_event(ev);
}

probes::ProbeEvent ProbeFeed::convert(const trace::SyscallEvent &ev) const
{
	probes::ProbeEvent out;
	out.nr = ev.nr;
	out.args = ev.args;
	// A task names itself (prctl): printed as it is, it could drive the
	// terminal. Escaped here, so printf, map keys and JSON all get the same.
	out.comm = escape_text(ev.comm, Layout::Field);
	out.pid = ev.tgid;	// bpftrace's pid is the process,
	out.tid = ev.pid;	// its tid the kernel's pid
	out.cpu = ev.cpu;
	out.nsecs = to_ns_(ev.tsc);
	out.str = escape_text(ev.str, Layout::Field);	// guest bytes: never raw to the terminal
	return out;
}

}  // namespace vtice::console
