// vtice hv status|caps|break: what the hypervisor module reports through
// /dev/vtice, and the break-in of its debug stub. Rendering lives in
// hv_format.cpp; this file talks to the device.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "args.hpp"
#include "device.hpp"
#include "hv_format.hpp"
#include "subcommands.hpp"

namespace vtice::console {

namespace {

const char kHelp[] =
	"usage: vtice hv status|caps|break [--device PATH]\n"
	"\n"
	"Asks the loaded vtice hypervisor module (root only):\n"
	"  status   which CPUs are virtualized, and their VM-exit counts per exit\n"
	"           reason per CPU\n"
	"  caps     the VMX features the module found and probed on this machine,\n"
	"           and the raw VMX capability MSRs\n"
	"  break    stop every CPU for the module's GDB stub (loaded with\n"
	"           debug_port=), as a Ctrl-C in the debugger would; returns when\n"
	"           the debugger resumes the machine, and says how long it stood\n"
	"\n"
	"options:\n"
	"  --device PATH   the vtice device (default /dev/vtice)\n";

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

int fail(const Error &error)
{
	std::fprintf(stderr, "vtice hv: %s\n", error.to_string().c_str());
	return kExitFailure;
}

int run_status(const std::string &path)
{
	auto dev = open_device(path, O_RDONLY);
	if (!dev)
		return fail(dev.error());
	auto status = read_status(*dev, path);
	if (!status)
		return fail(status.error());
	auto cpus = read_cpu_stats(*dev, path, *status);
	if (!cpus)
		return fail(cpus.error());
	std::fputs(format_status(*status, *cpus).c_str(), stdout);
	return kExitOk;
}

int run_caps(const std::string &path)
{
	auto dev = open_device(path, O_RDONLY);
	if (!dev)
		return fail(dev.error());
	auto caps = request<vtice_caps>();
	if (ioctl(dev->get(), VTICE_IOC_CAPS, &caps) < 0)
		return fail(ioctl_error(path, "VTICE_IOC_CAPS", errno));
	std::fputs(format_caps(caps).c_str(), stdout);
	return kExitOk;
}

// The ioctl returns only when the debugger resumes the machine.
int run_break(const std::string &path)
{
	auto dev = open_device(path, O_RDONLY);
	if (!dev)
		return fail(dev.error());
	auto br = request<vtice_break>();
	std::fprintf(stderr, "vtice hv break: asking the hypervisor to stop every CPU; the machine "
			     "then waits for the debugger on the stub's serial line\n");
	if (ioctl(dev->get(), VTICE_IOC_BREAK, &br) < 0) {
		int err = errno;
		if (err == ENODEV)
			return fail(make_error(path + ": no debug stub configured: load vtice.ko with "
						      "debug_port=0x2f8 (the I/O base of a free 16550 UART)"));
		if (err == EINTR)
			return fail(make_error(path + ": interrupted before the machine stopped"));
		return fail(ioctl_error(path, "VTICE_IOC_BREAK", err));
	}
	std::printf("resumed after %.3f s stopped\n", (double)br.stopped_ns / 1e9);
	return kExitOk;
}

}  // namespace

int cmd_hv(int argc, char **argv)
{
	auto args = parse_args(argc, argv, {{"--device", true}});
	if (!args) {
		std::fprintf(stderr, "vtice hv: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	std::string path = args->get("--device").value_or("/dev/" VTICE_DEVICE_NAME);
	if (args->positional.size() != 1) {
		std::fprintf(stderr, "vtice hv: expected one of 'status', 'caps' or 'break'\n\n%s",
			     kHelp);
		return kExitUsage;
	}
	const std::string &what = args->positional[0];
	if (what == "status")
		return run_status(path);
	if (what == "caps")
		return run_caps(path);
	if (what == "break")
		return run_break(path);
	std::fprintf(stderr, "vtice hv: unknown request '%s' (status, caps, break)\n", what.c_str());
	return kExitUsage;
}

}  // namespace vtice::console
