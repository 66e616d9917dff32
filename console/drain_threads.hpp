// The record rings drained from two threads on two different CPUs. While a
// call is traced, its task runs in the kernel and is not preempted: a
// reader queued behind it on the same CPU cannot drain until the call
// ends, and the traced CPU's waits for room run out (docs/tracing.md,
// "Rings"). With a drainer on each of two CPUs, one is never behind it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "record_rings.hpp"

namespace vtice::console {

class DrainThreads {
public:
	// Starts draining every period_ms; the rings must outlive this.
	DrainThreads(const std::vector<std::unique_ptr<RecordRing>> &rings, long period_ms);
	DrainThreads(const DrainThreads &) = delete;
	DrainThreads &operator=(const DrainThreads &) = delete;
	~DrainThreads();	// stop()

	// Ends the threads; what they drained stays for take(), what they did
	// not stays in the rings.
	void stop();
	// What the threads drained since the last take, ring by ring, in order.
	std::vector<std::vector<vtice_record>> take();
	// The CPUs the drainers were pinned to (-1: not pinned).
	const std::vector<int> &cpus() const { return cpus_; }

private:
	void run(int cpu);
	void drain_once();

	const std::vector<std::unique_ptr<RecordRing>> &rings_;
	long period_ms_;
	std::mutex mutex_;	// one consumer at a time: each ring has one tail
	std::vector<std::vector<vtice_record>> drained_;
	std::atomic<bool> stop_{false};
	std::vector<int> cpus_;
	std::vector<std::thread> threads_;
};

// Two different CPUs this process may run on, or one -1 if it has one.
std::vector<int> two_allowed_cpus();

}  // namespace vtice::console
