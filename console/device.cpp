// /dev/vtice helpers (device.hpp).
#include "device.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vtice::console {

DeviceFd::~DeviceFd()
{
	if (fd_ >= 0)
		close(fd_);
}

static Error open_error(const std::string &path, int err)
{
	if (err == ENOENT || err == ENODEV || err == ENXIO)
		return make_error(path + ": no such file: is the vtice module loaded?");
	if (err == EACCES || err == EPERM)
		return make_error(path + ": permission denied: root only");
	return make_error(path + ": " + std::strerror(err));
}

// Opened without blocking (a FIFO named by mistake would wait for a
// writer), then checked by the descriptor: only a character device can be
// the vtice device.
Result<DeviceFd> open_device(const std::string &path, int flags)
{
	int fd = open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return open_error(path, errno);
	DeviceFd device(fd);
	struct stat info;
	if (fstat(fd, &info) != 0)
		return open_error(path, errno);
	if (!S_ISCHR(info.st_mode))
		return make_error(path + ": not the vtice device (that is a character device, /dev/vtice)");
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return device;
}

Error ioctl_error(const std::string &path, const char *what, int err)
{
	if (err == ENOTTY)
		return make_error(path + ": " + what + " not supported by this module (is " + path +
				  " the vtice device, of the same version?)");
	if (err == EINVAL)
		return make_error(path + ": " + what + " rejected (ABI version " +
				  std::to_string(VTICE_ABI_VERSION) + " mismatch?)");
	return make_error(path + ": " + what + ": " + std::strerror(err));
}

Result<vtice_status> read_status(const DeviceFd &dev, const std::string &path)
{
	auto status = request<vtice_status>();
	if (ioctl(dev.get(), VTICE_IOC_STATUS, &status) < 0)
		return ioctl_error(path, "VTICE_IOC_STATUS", errno);
	return status;
}

// CPUs the module does not know (not possible, offline) answer EINVAL and
// are left out; any other failure is an error.
Result<std::vector<vtice_cpu_stats>> read_cpu_stats(const DeviceFd &dev, const std::string &path,
						    const vtice_status &status)
{
	std::vector<vtice_cpu_stats> cpus;
	unsigned limit = status.nr_cpu_ids < VTICE_MAX_CPUS ? status.nr_cpu_ids : VTICE_MAX_CPUS;
	for (unsigned cpu = 0; cpu < limit; cpu++) {
		auto stats = request<vtice_cpu_stats>();
		stats.cpu = cpu;
		if (ioctl(dev.get(), VTICE_IOC_CPU_STATS, &stats) == 0)
			cpus.push_back(stats);
		else if (errno != EINVAL && errno != ENODEV && errno != ENXIO)
			return ioctl_error(path, "VTICE_IOC_CPU_STATS", errno);
	}
	return cpus;
}

Result<vtice_lbr> read_lbr(const DeviceFd &dev, const std::string &path, unsigned cpu)
{
	auto lbr = request<vtice_lbr>();
	lbr.cpu = cpu;
	if (ioctl(dev.get(), VTICE_IOC_LBR, &lbr) == 0)
		return lbr;
	int err = errno;
	if (err == ENOTTY)
		return make_error(path + ": this vtice.ko has no VTICE_IOC_LBR (an older module)");
	if (err == EAGAIN)
		return make_error(path + ": CPU " + std::to_string(cpu) +
				  "'s snapshot kept changing while it was read; try again");
	return ioctl_error(path, "VTICE_IOC_LBR", err);
}

}  // namespace vtice::console
