// VTICE_IOC_PROFILE, shared by vtice profile and vtice probe's
// profile:hz:N: each error said as what it means for the user.
#pragma once

#include <string>

#include "device.hpp"
#include "vtice/result.hpp"
#include <vtice/ioctl.h>

namespace vtice::console {

Result<vtice_profile> profile_ioctl(const DeviceFd &dev, const std::string &path, vtice_profile req);

}  // namespace vtice::console
