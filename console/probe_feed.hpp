// Syscall events from the hypervisor's rings into a probe program: one
// poll's events of every CPU in time order, entries fired as they come,
// returns fired once paired with their entry (exits carry no syscall
// number), with the entry's arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "runtime.hpp"
#include "syscall_events.hpp"

namespace vtice::console {

struct ProbeFeedStats {
	std::uint64_t events = 0;
	std::uint64_t returns_unpaired = 0;	// the entry was before the run (or lost)
};

class ProbeFeed {
public:
	using ToNs = std::function<std::uint64_t(std::uint64_t tsc)>;
	ProbeFeed(probes::Runtime &runtime, ToNs to_ns) : runtime_(runtime), to_ns_(std::move(to_ns)) {}

	// Records of all rings from one poll (each ring's groups are whole).
	void feed(const std::vector<std::vector<vtice_record>> &per_cpu);
	// Decoded events, any order; fired in TSC order.
	void feed_events(std::vector<trace::SyscallEvent> events);

	const ProbeFeedStats &stats() const { return stats_; }
	const trace::SyscallDecodeStats &decode_stats() const { return decode_; }

private:
	probes::ProbeEvent convert(const trace::SyscallEvent &ev) const;

	probes::Runtime &runtime_;
	ToNs to_ns_;
	trace::SyscallPairer pairer_;
	trace::SyscallDecodeStats decode_;
	ProbeFeedStats stats_;
};

}  // namespace vtice::console
