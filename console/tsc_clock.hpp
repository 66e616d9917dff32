// Hypervisor records carry the TSC; probe programs read nanoseconds
// (nsecs). The two are tied by a short calibration against
// CLOCK_MONOTONIC when the run starts: the console runs on the traced
// machine, so both clocks are that machine's.
#pragma once

#include <cstdint>

namespace vtice::console {

class TscClock {
public:
	// Calibrates over about calibrate_ms milliseconds.
	explicit TscClock(long calibrate_ms = 50);
	// CLOCK_MONOTONIC, in nanoseconds.
	static std::uint64_t now_ns();
	// The monotonic time at which the TSC read tsc.
	std::uint64_t to_ns(std::uint64_t tsc) const;
	double ticks_per_ns() const { return ticks_per_ns_; }

private:
	std::uint64_t tsc0_ = 0, ns0_ = 0;
	double ticks_per_ns_ = 1;
};

}  // namespace vtice::console
