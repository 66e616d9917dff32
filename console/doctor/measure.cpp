#include "measure.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cpuid.h>
#include <x86intrin.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "device.hpp"
#include "machine_facts.hpp"
#include "processes.hpp"
#include "trace_common.hpp"

namespace vtice::console::doctor {

namespace {

constexpr int kRuns = 20, kCallsPerRun = 1000;

// Pins the calling thread to one CPU until destroyed.
class Pin {
public:
	explicit Pin(unsigned cpu)
	{
		sched_getaffinity(0, sizeof(old_), &old_);
		pinned_ = pin_self_to(static_cast<int>(cpu));
	}
	~Pin() { sched_setaffinity(0, sizeof(old_), &old_); }
	bool pinned() const { return pinned_; }

private:
	cpu_set_t old_{};
	bool pinned_ = false;
};

Result<std::uint64_t> cpu_exits(const DeviceFd &dev, const std::string &path, unsigned cpu)
{
	auto stats = request<vtice_cpu_stats>();
	stats.cpu = cpu;
	if (ioctl(dev.get(), VTICE_IOC_CPU_STATS, &stats) < 0)
		return ioctl_error(path, "VTICE_IOC_CPU_STATS", errno);
	return stats.exits_total;
}

Result<void> syscall_trap(const DeviceFd &dev, const std::string &path, std::uint32_t op, const std::string &comm)
{
	auto req = request<vtice_syscalls>();
	req.op = op;
	std::strncpy(req.comm, comm.c_str(), sizeof(req.comm) - 1);
	if (ioctl(dev.get(), VTICE_IOC_SYSCALLS, &req) < 0)
		return trap_error(path, "VTICE_IOC_SYSCALLS", errno);
	return {};
}

double fastest_run_cycles()
{
	std::uint64_t best = ~0ull;
	for (int run = 0; run < kRuns; run++) {
		std::uint64_t start = __rdtsc();
		for (int i = 0; i < kCallsPerRun; i++)
			syscall(SYS_getpid);
		best = std::min<std::uint64_t>(best, __rdtsc() - start);
	}
	return static_cast<double>(best) / kCallsPerRun;
}

}  // namespace

Result<GetpidCost> measure_getpid(const std::string &device, const std::optional<std::string> &arm_comm)
{
	GetpidCost cost;
	cost.cpu = static_cast<unsigned>(sched_getcpu());
	Pin pin(cost.cpu);
	if (!pin.pinned())
		return Error{"cannot pin to CPU " + std::to_string(cost.cpu) + ": " + std::strerror(errno)};
	if (device.empty()) {
		cost.exits_per_call = -1;
		cost.cycles_per_call = fastest_run_cycles();
		return cost;
	}
	auto dev = open_device(device, O_RDONLY);
	if (!dev)
		return dev.error();
	if (arm_comm) {
		auto armed = syscall_trap(*dev, device, VTICE_SYSCALLS_ARM, *arm_comm);
		if (!armed)
			return armed.error();
	}
	auto before = cpu_exits(*dev, device, cost.cpu);
	cost.cycles_per_call = fastest_run_cycles();
	auto after = cpu_exits(*dev, device, cost.cpu);
	if (arm_comm)
		(void)syscall_trap(*dev, device, VTICE_SYSCALLS_DISARM, "");
	if (!before)
		return before.error();
	if (!after)
		return after.error();
	cost.exits_per_call = static_cast<double>(*after - *before) / (kRuns * kCallsPerRun);
	return cost;
}

std::string describe_cycles(const GetpidCost &cost)
{
	char text[64];
	std::snprintf(text, sizeof(text), "%.0f TSC cycles per getpid", cost.cycles_per_call);
	return text;
}

std::string describe_cost(const GetpidCost &cost)
{
	char text[96];
	std::snprintf(text, sizeof(text), "%.3f VM exits and %.0f TSC cycles per getpid (CPU %u)",
		      cost.exits_per_call, cost.cycles_per_call, cost.cpu);
	return text;
}

namespace {

double fastest_cpuid_cycles()
{
	std::uint64_t best = ~0ull;
	unsigned a, b, c, d;
	for (int i = 0; i < kCallsPerRun; i++) {
		std::uint64_t start = __rdtsc();
		__cpuid_count(0, 0, a, b, c, d);
		best = std::min<std::uint64_t>(best, __rdtsc() - start);
	}
	return static_cast<double>(best);
}

}  // namespace

std::vector<double> cpuid_cycles_per_cpu()
{
	std::vector<double> cycles;
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	for (long cpu = 0; cpu < cpus && cpu < CPU_SETSIZE; cpu++) {
		Pin pin(static_cast<unsigned>(cpu));
		cycles.push_back(pin.pinned() ? fastest_cpuid_cycles() : 0);
	}
	return cycles;
}

bool cpuid_back_to_bare(const std::vector<double> &loaded, const std::vector<double> &now)
{
	if (loaded.size() != now.size())
		return false;
	for (std::size_t cpu = 0; cpu < now.size(); cpu++)
		if (loaded[cpu] > 0 && now[cpu] * 2 > loaded[cpu])
			return false;
	return true;
}

}  // namespace vtice::console::doctor
