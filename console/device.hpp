// /dev/vtice from user space: opening it, ioctl requests and their errors,
// shared by the subcommands that talk to the module (hv, trace syscalls).
#pragma once

#include <string>
#include <vector>
#include <utility>

extern "C" {
#include <vtice/ioctl.h>
}

#include "vtice/result.hpp"

namespace vtice::console {

class DeviceFd {
public:
	explicit DeviceFd(int fd) : fd_(fd) {}
	DeviceFd(DeviceFd &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
	DeviceFd(const DeviceFd &) = delete;
	DeviceFd &operator=(const DeviceFd &) = delete;
	DeviceFd &operator=(DeviceFd &&) = delete;
	~DeviceFd();
	int get() const { return fd_; }

private:
	int fd_;
};

// Errors that say what to do: module not loaded, not root, wrong device.
Result<DeviceFd> open_device(const std::string &path, int flags);
Error ioctl_error(const std::string &path, const char *what, int err);

// VTICE_IOC_STATUS, VTICE_IOC_CPU_STATS of every CPU the module knows
// (those it does not, not possible or offline, are left out), VTICE_IOC_LBR.
Result<vtice_status> read_status(const DeviceFd &dev, const std::string &path);
Result<std::vector<vtice_cpu_stats>> read_cpu_stats(const DeviceFd &dev, const std::string &path,
						    const vtice_status &status);
Result<vtice_lbr> read_lbr(const DeviceFd &dev, const std::string &path, unsigned cpu);

// Every vtice ioctl argument begins with its size and the ABI version.
template <class T>
T request()
{
	T arg{};
	arg.size = sizeof(T);
	arg.version = VTICE_ABI_VERSION;
	return arg;
}

}  // namespace vtice::console
