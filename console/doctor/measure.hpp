// What a syscall costs with vtice loaded: VM exits (the module's own
// per-CPU counts) and TSC cycles per getpid, on one CPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vtice/result.hpp"

namespace vtice::console::doctor {

struct GetpidCost {
	unsigned cpu = 0;
	double exits_per_call = 0;	// < 0 when not counted (no module)
	double cycles_per_call = 0;	// the fastest run of 1,000 calls, per call
};

// 20,000 getpid calls pinned to the CPU this runs on. device "" measures
// cycles only (before the load). With arm_comm, the syscall trap is armed
// for that comm (a task that does not exist) while it runs.
Result<GetpidCost> measure_getpid(const std::string &device, const std::optional<std::string> &arm_comm);

// "0.000 VM exits and 565 TSC cycles per getpid (CPU 0)"
std::string describe_cost(const GetpidCost &cost);
std::string describe_cycles(const GetpidCost &cost);

// CPUID exits to the hypervisor on every CPU it runs (SDM Vol. 3C 25.1.2),
// so its cost tells a virtualized CPU from a bare one: the fastest of 1,000
// CPUIDs in TSC cycles, per CPU (0 for one this cannot run on). CPUID.1's
// VMX bit tells nothing: vtice shows it as the kernel saw it at boot.
std::vector<double> cpuid_cycles_per_cpu();

// Every CPU's CPUID costs at most half what it did while loaded: the
// unload took each CPU out of VMX non-root.
bool cpuid_back_to_bare(const std::vector<double> &loaded, const std::vector<double> &now);

}  // namespace vtice::console::doctor
