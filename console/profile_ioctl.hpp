// VTICE_IOC_PROFILE, shared by vtice profile and vtice probe's
// profile:hz:N: each error said as what it means for the user.
#pragma once

#include <string>

#include "device.hpp"
#include "trace_common.hpp"
#include "vtice/result.hpp"
#include <vtice/ioctl.h>

namespace vtice::console {

Result<vtice_profile> profile_ioctl(const DeviceFd &dev, const std::string &path, vtice_profile req);

// VTICE_PROFILE_ARM: cpu (or VTICE_PROFILE_ALL_CPUS) hz times a second, each
// sample with stack_bytes of its kernel stack, recorded only for the
// filter's task (the hypervisor compares comm and pid).
vtice_profile profile_arm_request(std::uint32_t hz, std::uint32_t stack_bytes, std::uint32_t cpu,
				  const TaskFilter &filter);

}  // namespace vtice::console
