// VTICE_IOC_PROFILE (profile_ioctl.hpp).
#include "profile_ioctl.hpp"

#include <sys/ioctl.h>

#include <cerrno>

#include "messages.hpp"

namespace vtice::console {

Result<vtice_profile> profile_ioctl(const DeviceFd &dev, const std::string &path, vtice_profile req)
{
	if (ioctl(dev.get(), VTICE_IOC_PROFILE, &req) == 0)
		return req;
	int err = errno;
	if (err == EBUSY)
		return make_error("another 'vtice profile', or a probe program's profile:hz, owns the profiler");
	if (err == EOPNOTSUPP)
		return make_error(path + ": this CPU has no VMX-preemption timer, which the profiler samples with");
	if (err == ENODEV)
		return make_error(path + ": a CPU to sample is not virtualized (the module loaded with virtualize=0? "
					 "'vtice hv' lists the CPUs)");
	if (err == EINVAL && req.op == VTICE_PROFILE_ARM)
		return make_error(path + ": the module refused the request (is CPU " + std::to_string(req.cpu) +
				  " online? --hz and --stack-bytes within their limits?)");
	return ioctl_error(path, "VTICE_IOC_PROFILE", err);
}

}  // namespace vtice::console
