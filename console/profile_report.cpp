// Counting and printing profile samples (profile_report.hpp).
#include "profile_report.hpp"

#include <algorithm>
#include <set>

#include "render.hpp"

namespace vtice::console {

SampleKind classify(const trace::ProfileSample &s)
{
	if (s.user)
		return SampleKind::user;
	if (s.halted || (s.has_task && s.pid == 0))
		return SampleKind::idle;
	return SampleKind::kernel;
}

const std::string &FrameNamer::name_of(std::uint64_t address)
{
	auto it = cache_.find(address);
	if (it != cache_.end())
		return it->second;
	std::string name;
	if (auto hit = symbolize_ ? symbolize_(address) : std::nullopt)
		name = printable_symbol(hit->name);	// reaches the terminal in the text report
	if (name.empty()) {
		char hex[24];
		std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(address));
		name = hex;
	}
	return cache_.emplace(address, std::move(name)).first->second;
}

std::vector<std::string> FrameNamer::names(const trace::ProfileSample &s, const SampleStack &stack)
{
	if (s.user)
		return {"[user]"};
	std::vector<std::string> out;
	out.reserve(stack.frames.size());
	for (std::size_t i = stack.frames.size(); i-- > 0;)
		out.push_back(name_of(i == 0 ? stack.frames[i] : stack.frames[i] - 1));
	return out;
}

std::string kstack_text(FrameNamer &namer, const symbols::OrcTables *orc, const trace::ProfileSample &s)
{
	return kstack_text(namer, s, unwind_sample(orc, s, kMaxSampleFrames));
}

std::string kstack_text(FrameNamer &namer, const trace::ProfileSample &s, const SampleStack &stack)
{
	std::vector<std::string> names = namer.names(s, stack);
	std::string out;
	for (auto n = names.rbegin(); n != names.rend(); ++n)
		out += (out.empty() ? "" : "\n") + *n;
	return out;
}

namespace {

std::string task_name(const trace::ProfileSample &s)
{
	return s.has_task && !s.comm.empty() ? s.comm : "[unknown task]";
}

double percent(std::uint64_t part, std::uint64_t whole)
{
	return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

void ProfileReport::add(const trace::ProfileSample &s, const std::vector<std::string> &names, bool truncated)
{
	CpuCounts &cpu = cpus_[s.cpu];
	// A gap of more than one and a half periods: the timer did not count
	// (a deep C-state) or the CPU was in VMX root, or samples were lost.
	if (cpu.last_tsc && period_tsc_ && s.tsc > cpu.last_tsc + period_tsc_ + period_tsc_ / 2)
		cpu.unsampled += (s.tsc - cpu.last_tsc + period_tsc_ / 2) / period_tsc_ - 1;
	cpu.last_tsc = std::max(cpu.last_tsc, s.tsc);
	cpu.samples++;
	switch (classify(s)) {
	case SampleKind::kernel: cpu.kernel++; break;
	case SampleKind::user: cpu.user++; break;
	case SampleKind::idle: cpu.idle++; break;
	}
	samples_++;
	truncated_ += truncated;
	if (names.empty())
		return;
	self_[names.back()]++;
	std::set<std::string_view> seen;
	for (const std::string &n : names)
		if (seen.insert(n).second)
			total_[n]++;
	std::string key = trace::folded_frame(task_name(s));
	for (const std::string &n : names)
		key += ";" + trace::folded_frame(n);
	folded_[key]++;
}

void ProfileReport::write_text(std::FILE *out, std::size_t top) const
{
	std::fprintf(out, "%-5s %9s %8s %8s %8s %10s\n", "CPU", "samples", "kernel", "user", "idle", "unsampled");
	CpuCounts all;
	for (const auto &[cpu, c] : cpus_) {
		std::fprintf(out, "%-5u %9llu %7.1f%% %7.1f%% %7.1f%% %10llu\n", cpu,
			     static_cast<unsigned long long>(c.samples), percent(c.kernel, c.samples),
			     percent(c.user, c.samples), percent(c.idle, c.samples),
			     static_cast<unsigned long long>(c.unsampled));
		all.samples += c.samples, all.kernel += c.kernel, all.user += c.user, all.idle += c.idle;
		all.unsampled += c.unsampled;
	}
	if (cpus_.size() > 1)
		std::fprintf(out, "%-5s %9llu %7.1f%% %7.1f%% %7.1f%% %10llu\n", "all",
			     static_cast<unsigned long long>(all.samples), percent(all.kernel, all.samples),
			     percent(all.user, all.samples), percent(all.idle, all.samples),
			     static_cast<unsigned long long>(all.unsampled));
	std::vector<std::pair<std::string, std::uint64_t>> by_self(self_.begin(), self_.end());
	std::sort(by_self.begin(), by_self.end(), [](const auto &a, const auto &b) {
		return a.second != b.second ? a.second > b.second : a.first < b.first;
	});
	if (by_self.size() > top)
		by_self.resize(top);
	std::fprintf(out, "\ntop functions (self: the CPU was in it; total: it was on the stack)\n");
	std::fprintf(out, "%7s %7s %9s  %s\n", "self", "total", "samples", "function");
	for (const auto &[name, self] : by_self)
		std::fprintf(out, "%6.1f%% %6.1f%% %9llu  %s\n", percent(self, samples_),
			     percent(total_.at(name), samples_), static_cast<unsigned long long>(self), name.c_str());
	if (truncated_)
		std::fprintf(out, "\n%llu of %llu samples' stacks end early (the copied stack or ORC ran out: "
			     "--stack-bytes copies more)\n", static_cast<unsigned long long>(truncated_),
			     static_cast<unsigned long long>(samples_));
}

void ProfileReport::write_folded(std::FILE *out) const
{
	for (const auto &[stack, count] : folded_)
		std::fprintf(out, "%s %llu\n", stack.c_str(), static_cast<unsigned long long>(count));
}

}  // namespace vtice::console
