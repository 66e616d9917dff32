// What a syscall costs with vtice loaded: VM exits (the module's own
// per-CPU counts) and TSC cycles per getpid, on one CPU.
#pragma once

#include <optional>
#include <string>

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

// The online CPUs whose CPUID.1:ECX.VMX reads set (each CPU visited).
unsigned cpus_showing_vmx();

}  // namespace vtice::console::doctor
