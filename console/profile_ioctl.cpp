// VTICE_IOC_PROFILE (profile_ioctl.hpp).
#include "profile_ioctl.hpp"

#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "messages.hpp"

namespace vtice::console {

Result<vtice_profile> profile_ioctl(const DeviceFd &dev, const std::string &path, vtice_profile req)
{
	if (ioctl(dev.get(), VTICE_IOC_PROFILE, &req) == 0)
		return req;
	int err = errno;
	if (err == EBUSY)
		return make_error("another 'vtice profile', a probe program's profile:hz, or one run through the debug "
				  "stub (probe at vtice attach), owns the profiler");
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

vtice_profile profile_arm_request(std::uint32_t hz, std::uint32_t stack_bytes, std::uint32_t cpu,
				  const TaskFilter &filter)
{
	auto req = request<vtice_profile>();
	req.op = VTICE_PROFILE_ARM;
	req.hz = hz;
	req.stack_bytes = stack_bytes;
	req.cpu = cpu;
	req.pid = filter.pid;
	std::memcpy(req.comm, filter.comm.data(), std::min(filter.comm.size(), sizeof(req.comm) - 1));
	return req;
}

}  // namespace vtice::console
