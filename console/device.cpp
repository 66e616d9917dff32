// /dev/vtice helpers (device.hpp).
#include "device.hpp"

#include <fcntl.h>
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

Result<DeviceFd> open_device(const std::string &path, int flags)
{
	int fd = open(path.c_str(), flags | O_CLOEXEC);
	if (fd < 0)
		return open_error(path, errno);
	return DeviceFd(fd);
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

}  // namespace vtice::console
