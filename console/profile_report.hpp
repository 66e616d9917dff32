// What `vtice profile` makes of its samples: names for their frames, the
// counts per CPU (kernel, user, idle, periods with no sample), the top
// functions, folded stacks for FlameGraph, and a timeline for Perfetto.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile_samples.hpp"
#include "profile_stacks.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice::console {

enum class SampleKind { kernel, user, idle };

// User (CPL 3), idle (the idle task, pid 0, or a halted CPU), or kernel.
SampleKind classify(const trace::ProfileSample &s);

// A sample's frames as names, root first: "[user]" for user time, the
// kernel's function names otherwise ("0xADDRESS" where no symbol covers
// it). Return addresses are looked up one byte back, inside their call.
class FrameNamer {
public:
	explicit FrameNamer(Symbolizer symbolize) : symbolize_(std::move(symbolize)) {}
	std::vector<std::string> names(const trace::ProfileSample &s, const SampleStack &stack);

private:
	const std::string &name_of(std::uint64_t address);

	Symbolizer symbolize_;
	std::unordered_map<std::uint64_t, std::string> cache_;
};

// A probe hit's kstack as its text: the copied stack unwound with orc (null:
// the hit's function alone) and named by namer, leaf first, a frame a line.
std::string kstack_text(FrameNamer &namer, const symbols::OrcTables *orc, const trace::ProfileSample &s);
// The same for a stack already unwound.
std::string kstack_text(FrameNamer &namer, const trace::ProfileSample &s, const SampleStack &stack);

struct CpuCounts {
	std::uint64_t samples = 0, kernel = 0, user = 0, idle = 0;
	std::uint64_t unsampled = 0;	// periods that passed with no sample
	std::uint64_t last_tsc = 0;
};

class ProfileReport {
public:
	explicit ProfileReport(std::uint64_t period_tsc) : period_tsc_(period_tsc) {}
	// names: the sample's frames, root first (FrameNamer).
	void add(const trace::ProfileSample &s, const std::vector<std::string> &names, bool truncated);

	std::uint64_t samples() const { return samples_; }
	const std::map<std::uint32_t, CpuCounts> &cpus() const { return cpus_; }
	// The per-CPU table and the top functions by self samples.
	void write_text(std::FILE *out, std::size_t top) const;
	// "comm;root;...;leaf count" lines, as FlameGraph's flamegraph.pl reads them.
	void write_folded(std::FILE *out) const;

private:
	std::uint64_t period_tsc_;
	std::uint64_t samples_ = 0, truncated_ = 0;
	std::map<std::uint32_t, CpuCounts> cpus_;
	std::unordered_map<std::string, std::uint64_t> self_, total_;
	std::map<std::string, std::uint64_t> folded_;
};

// Chrome trace-event JSON, which Perfetto loads: a track per CPU, each
// sample's frames as nested slices one period long, consecutive samples
// with the same callers merged into one slice. Written as samples come.
class ProfileTimeline {
public:
	ProfileTimeline(std::FILE *out, double ticks_per_us, std::uint64_t period_tsc);
	void add(const trace::ProfileSample &s, const std::vector<std::string> &names);
	void finish();	// closes every open slice and the JSON

private:
	struct Track {
		std::vector<std::string> open;	// slices open now, root first
		std::uint64_t end_tsc = 0;	// where the last sample's period ends
		bool named = false;
	};
	void close_to(std::uint32_t cpu, Track &t, std::size_t depth, std::uint64_t tsc);
	void event(const std::string &body);
	double micros(std::uint64_t tsc) const;

	std::FILE *out_;
	double ticks_per_us_;
	std::uint64_t period_tsc_;
	std::uint64_t first_tsc_ = 0;
	bool any_ = false, first_event_ = true;
	std::map<std::uint32_t, Track> tracks_;
};

}  // namespace vtice::console
