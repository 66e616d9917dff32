// Text rendering of the hypervisor's status and capabilities for
// "vtice hv". Pure functions over the uapi structs so they can be tested
// with recorded values, no device needed.
#pragma once

#include <string>
#include <vector>

#include <vtice/ioctl.h>

#include "vtice/symbolizer.hpp"

namespace vtice::console {

// Name of a basic VM-exit reason as Linux's <asm/vmx.h> spells it
// ("CPUID", "EPT_VIOLATION"), or "REASON_<n>" for one it does not know.
std::string exit_reason_name(unsigned reason);

// The header line, then one row per exit reason that any CPU saw, with a
// column per CPU: which CPUs are virtualized and their exit counts.
std::string format_status(const vtice_status &status, const std::vector<vtice_cpu_stats> &cpus);

// One line per capability flag, then the raw VMX MSR values.
std::string format_caps(const vtice_caps &caps);

// Why a CPU has no LBR snapshot, in words ("DEBUGCTL.LBR does not stick:
// ..."), or "" for VTICE_LBR_OK.
std::string lbr_status_text(const vtice_lbr &lbr);

// One CPU's LBR snapshot: a header line (event, guest RIP, count), then one
// "from -> to" line per branch, oldest first, with function+offset where
// symbolize knows the address (it may be empty).
std::string format_lbr(const vtice_lbr &lbr, const Symbolizer &symbolize);

}  // namespace vtice::console
