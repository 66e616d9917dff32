// Two ring drainers on two CPUs (drain_threads.hpp).
#include "drain_threads.hpp"

#include <sched.h>
#include <time.h>

namespace vtice::console {

std::vector<int> two_allowed_cpus()
{
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2)
		return {-1};
	int first = -1, last = -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		if (first < 0)
			first = cpu;
		last = cpu;
	}
	return {first, last};
}

DrainThreads::DrainThreads(const std::vector<std::unique_ptr<RecordRing>> &rings, long period_ms)
	: rings_(rings), period_ms_(period_ms), drained_(rings.size()), cpus_(two_allowed_cpus())
{
	for (int cpu : cpus_)
		threads_.emplace_back([this, cpu] { run(cpu); });
}

DrainThreads::~DrainThreads()
{
	stop();
}

void DrainThreads::stop()
{
	stop_ = true;
	for (std::thread &t : threads_)
		if (t.joinable())
			t.join();
}

void DrainThreads::run(int cpu)
{
	if (cpu >= 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);	// best effort: unpinned still drains
	}
	struct timespec period = {period_ms_ / 1000, (period_ms_ % 1000) * 1000000};
	while (!stop_) {
		nanosleep(&period, nullptr);
		drain_once();
	}
}

void DrainThreads::drain_once()
{
	std::lock_guard<std::mutex> lock(mutex_);
	for (std::size_t i = 0; i < rings_.size(); i++)
		rings_[i]->drain(drained_[i]);
}

std::vector<std::vector<vtice_record>> DrainThreads::take()
{
	std::vector<std::vector<vtice_record>> out(rings_.size());
	std::lock_guard<std::mutex> lock(mutex_);
	out.swap(drained_);
	return out;
}

}  // namespace vtice::console
