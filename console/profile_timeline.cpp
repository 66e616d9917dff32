// Profile samples as a Perfetto timeline (profile_report.hpp): Chrome
// trace-event JSON, "B" and "E" events per CPU track, so that samples with
// the same callers make one slice as long as they last.
#include <algorithm>
#include <cstdio>

#include "profile_report.hpp"
#include "vtice/json_string.hpp"

namespace vtice::console {

ProfileTimeline::ProfileTimeline(std::FILE *out, double ticks_per_us, std::uint64_t period_tsc)
	: out_(out), ticks_per_us_(ticks_per_us > 0 ? ticks_per_us : 1), period_tsc_(period_tsc)
{
	std::fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", out_);
	event("\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"vtice profile\"}");
}

double ProfileTimeline::micros(std::uint64_t tsc) const
{
	return tsc > first_tsc_ ? static_cast<double>(tsc - first_tsc_) / ticks_per_us_ : 0.0;
}

void ProfileTimeline::event(const std::string &body)
{
	std::fputs(first_event_ ? "\n  {" : ",\n  {", out_);
	std::fputs(body.c_str(), out_);
	std::fputc('}', out_);
	first_event_ = false;
}

void ProfileTimeline::close_to(std::uint32_t cpu, Track &t, std::size_t depth, std::uint64_t tsc)
{
	char times[96];
	while (t.open.size() > depth) {
		std::snprintf(times, sizeof(times), ",\"ph\":\"E\",\"pid\":1,\"tid\":%u,\"ts\":%.3f", cpu, micros(tsc));
		event("\"name\":" + json_string(t.open.back()) + times);
		t.open.pop_back();
	}
}

void ProfileTimeline::add(const trace::ProfileSample &s, const std::vector<std::string> &names)
{
	if (!any_) {
		first_tsc_ = s.tsc;
		any_ = true;
	}
	Track &t = tracks_[s.cpu];
	if (!t.named) {
		event("\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(s.cpu) +
		      ",\"args\":{\"name\":\"CPU " + std::to_string(s.cpu) + "\"}");
		t.named = true;
	}
	// A sample stands for the period before it. One right after the last
	// keeps the slices of the callers they share; after a gap (or a clock
	// that went back) every slice closes and opens afresh.
	std::uint64_t begin = s.tsc > period_tsc_ ? s.tsc - period_tsc_ : 0;
	bool follows = t.end_tsc && s.tsc >= t.end_tsc && begin <= t.end_tsc + period_tsc_ / 2;
	std::size_t same = 0;
	while (follows && same < t.open.size() && same < names.size() && t.open[same] == names[same])
		same++;
	close_to(s.cpu, t, same, t.end_tsc);
	std::uint64_t opens_at = follows ? t.end_tsc : std::max(begin, t.end_tsc);
	char times[96];
	for (std::size_t i = same; i < names.size(); i++) {
		std::snprintf(times, sizeof(times), ",\"ph\":\"B\",\"pid\":1,\"tid\":%u,\"ts\":%.3f", s.cpu,
			      micros(opens_at));
		event("\"name\":" + json_string(names[i]) + times);
		t.open.push_back(names[i]);
	}
	t.end_tsc = std::max(s.tsc, opens_at);
}

void ProfileTimeline::finish()
{
	for (auto &[cpu, t] : tracks_)
		close_to(cpu, t, 0, t.end_tsc);
	std::fputs("\n]}\n", out_);
}

}  // namespace vtice::console
