// The hypervisor's records into a probe program: one poll's syscall events,
// probe hits and profile samples of every CPU in time order; entries and samples fired
// as they come, returns fired once paired with their entry (exits carry no
// syscall number), with the entry's arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "profile_samples.hpp"
#include "runtime.hpp"
#include "syscall_events.hpp"

namespace vtice::console {

struct ProbeFeedStats {
	std::uint64_t records = 0;	// read from the rings, each 32 bytes (what the program cost them)
	std::uint64_t events = 0;
	std::uint64_t returns_unpaired = 0;	// the entry was before the run (or lost)
};

class ProbeFeed {
public:
	using ToNs = std::function<std::uint64_t(std::uint64_t tsc)>;
	// A sample's kernel stack as kstack holds it: frames leaf first, one a
	// line. A fn: hit's comes the same way, its entry as the sample's RIP.
	using StackText = std::function<std::string(const trace::ProfileSample &)>;
	// The name of the function a kernel address is in (func), "" if none.
	using FunctionName = std::function<std::string(std::uint64_t)>;
	ProbeFeed(probes::Runtime &runtime, ToNs to_ns, StackText stack_text = {}, FunctionName function_name = {})
		: runtime_(runtime), to_ns_(std::move(to_ns)), stack_text_(std::move(stack_text)),
		  function_name_(std::move(function_name))
	{
	}

	// Records of all rings from one poll (each ring's groups are whole).
	void feed(const std::vector<std::vector<vtice_record>> &per_cpu);
	// Decoded events and samples, any order; fired in TSC order.
	void feed_events(std::vector<trace::SyscallEvent> events, std::vector<trace::ProfileSample> samples = {});

	const ProbeFeedStats &stats() const { return stats_; }
	const trace::SyscallDecodeStats &decode_stats() const { return decode_; }
	const trace::ProfileDecodeStats &sample_stats() const { return samples_; }

private:
	void on_syscall_event(const trace::SyscallEvent &ev);
	void on_probe_hit(const trace::SyscallEvent &ev);
	void on_sample(const trace::ProfileSample &s);
	probes::ProbeEvent convert(const trace::SyscallEvent &ev) const;

	probes::Runtime &runtime_;
	ToNs to_ns_;
	StackText stack_text_;
	FunctionName function_name_;
	trace::SyscallPairer pairer_;
	trace::SyscallDecodeStats decode_;
	trace::ProfileDecodeStats samples_;	// its lost count is decode_'s (the same rings)
	ProbeFeedStats stats_;
};

}  // namespace vtice::console
