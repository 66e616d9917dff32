#include "tsc_clock.hpp"

#include <time.h>
#include <x86intrin.h>

namespace vtice::console {

std::uint64_t TscClock::now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

TscClock::TscClock(long calibrate_ms)
{
	ns0_ = now_ns();
	tsc0_ = __rdtsc();
	timespec pause = {0, calibrate_ms * 1'000'000};
	while (nanosleep(&pause, &pause) != 0) {
	}
	std::uint64_t ns1 = now_ns(), tsc1 = __rdtsc();
	if (ns1 > ns0_ && tsc1 > tsc0_)
		ticks_per_ns_ = static_cast<double>(tsc1 - tsc0_) / static_cast<double>(ns1 - ns0_);
}

std::uint64_t TscClock::to_ns(std::uint64_t tsc) const
{
	double delta = (static_cast<double>(tsc) - static_cast<double>(tsc0_)) / ticks_per_ns_;
	double ns = static_cast<double>(ns0_) + delta;
	return ns <= 0 ? 0 : static_cast<std::uint64_t>(ns);
}

}  // namespace vtice::console
