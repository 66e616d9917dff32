// vtice hv status|caps|break|lbr: what the hypervisor module reports through
// /dev/vtice, and the break-in of its debug stub. Rendering lives in
// hv_format.cpp; this file talks to the device.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "device.hpp"
#include "hv_format.hpp"
#include "report_symbols.hpp"
#include "messages.hpp"
#include "subcommands.hpp"
#include "vtice/interrupts.hpp"

namespace vtice::console {

namespace {

const char kHelp[] =
	"usage: vtice hv status|caps|break|lbr [--cpu N] [--device PATH]\n"
	"\n"
	"Asks the loaded vtice hypervisor module (root only):\n"
	"  status   which CPUs are virtualized, and their VM-exit counts per exit\n"
	"           reason per CPU\n"
	"  caps     the VMX features the module found and probed on this machine,\n"
	"           and the raw VMX capability MSRs\n"
	"  break    stop every CPU for the module's GDB stub (loaded with\n"
	"           debug_port=), as a Ctrl-C in the debugger would; returns when\n"
	"           the debugger resumes the machine, and says how long it stood\n"
	"  lbr      the last branches each CPU took before a crash: where the CPU\n"
	"           honours LBR, the stub (debug_port=) saves every CPU's LBR stack\n"
	"           when the kernel oopses, panics, triple-faults or locks up; one\n"
	"           'from -> to' line per branch, oldest first, with function+offset\n"
	"           from /proc/kallsyms; says why when the CPU has no LBR\n"
	"\n"
	"options:\n"
	"  --cpu N         status, lbr: only CPU N\n"
	"  --device PATH   the vtice device (default /dev/vtice)\n";

int fail(const Error &error)
{
	eprintf("vtice hv: %s\n", error.to_string().c_str());
	return kExitFailure;
}

Result<unsigned> parse_cpu(const std::string &text, unsigned nr_cpu_ids)
{
	if (nr_cpu_ids == 0)
		return make_error("--cpu: the module reports no CPUs");
	auto cpu = parse_count("--cpu", text, 0, nr_cpu_ids - 1);
	if (!cpu)
		return make_error(cpu.error().message + " (the CPUs of this machine)");
	return static_cast<unsigned>(*cpu);
}

// Every CPU's counts, or only those of --cpu N.
int run_status(const std::string &path, const std::optional<std::string> &cpu_arg)
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
	if (cpu_arg) {
		auto cpu = parse_cpu(*cpu_arg, std::min<unsigned>(status->nr_cpu_ids, VTICE_MAX_CPUS));
		if (!cpu)
			return fail(cpu.error());
		std::erase_if(*cpus, [&](const vtice_cpu_stats &s) { return s.cpu != *cpu; });
		if (cpus->empty())
			return fail(make_error("CPU " + *cpu_arg + " is offline or was never virtualized"));
	}
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
	// The ioctl waits for the debugger: a signal interrupts it (EINTR).
	interrupts::install();
	eprintf("vtice hv break: asking the hypervisor to stop every CPU; the machine "
			     "then waits for the debugger on the stub's serial line\n");
	if (ioctl(dev->get(), VTICE_IOC_BREAK, &br) < 0) {
		int err = errno;
		if (err == ENODEV)
			return fail(make_error(path + ": no debug stub configured: load vtice.ko with "
						      "debug_port=0x2f8 (the I/O base of a free 16550 UART)"));
		if (err == EINTR) {
			fail(make_error(path + ": interrupted before the machine stopped"));
			return interrupts::end_signal() ? 128 + interrupts::end_signal() : 128 + SIGINT;
		}
		return fail(ioctl_error(path, "VTICE_IOC_BREAK", err));
	}
	std::printf("resumed after %.3f s stopped\n", (double)br.stopped_ns / 1e9);
	return kExitOk;
}

// Function+offset from the running kernel's /proc/kallsyms, when readable.
Symbolizer kernel_symbols()
{
	auto syms = load_external_symbols("/proc/kallsyms", 0);
	return syms ? syms->symbolize : Symbolizer{};
}

// One CPU, or every virtualized one; a model-wide "no LBR" is said once.
int run_lbr(const std::string &path, const std::optional<std::string> &cpu_arg)
{
	auto dev = open_device(path, O_RDONLY);
	if (!dev)
		return fail(dev.error());
	auto status = read_status(*dev, path);
	if (!status)
		return fail(status.error());
	unsigned first = 0, last = std::min<unsigned>(status->nr_cpu_ids, VTICE_MAX_CPUS);
	if (cpu_arg) {
		auto cpu = parse_cpu(*cpu_arg, last);
		if (!cpu)
			return fail(cpu.error());
		first = *cpu;
		last = *cpu + 1;
	}
	Symbolizer symbolize = kernel_symbols();
	for (unsigned cpu = first; cpu < last; cpu++) {
		if (!cpu_arg && !((status->virtualized[cpu / 64] >> (cpu % 64)) & 1))
			continue;
		auto lbr = read_lbr(*dev, path, cpu);
		if (!lbr)
			return fail(lbr.error());
		bool model_wide = lbr->status != VTICE_LBR_OK && lbr->status != VTICE_LBR_OFFLINE;
		if (model_wide && !cpu_arg) {
			std::printf("%s\n", lbr_status_text(*lbr).c_str());
			return kExitOk;
		}
		std::fputs(format_lbr(*lbr, symbolize).c_str(), stdout);
	}
	return kExitOk;
}

}  // namespace

int cmd_hv(int argc, char **argv)
{
	auto args = parse_args(argc, argv, {{"--device", true}, {"--cpu", true}});
	if (!args) {
		eprintf("vtice hv: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	std::string path = args->get("--device").value_or("/dev/" VTICE_DEVICE_NAME);
	if (args->positional.size() != 1) {
		eprintf("vtice hv: expected one of 'status', 'caps', 'break' or 'lbr'\n\n%s",
			     kHelp);
		return kExitUsage;
	}
	const std::string &what = args->positional[0];
	if (args->has("--cpu") && what != "status" && what != "lbr") {
		eprintf("vtice hv: --cpu applies to 'status' and 'lbr', not '%s'\n", what.c_str());
		return kExitUsage;
	}
	if (what == "status")
		return run_status(path, args->get("--cpu"));
	if (what == "caps")
		return run_caps(path);
	if (what == "break")
		return run_break(path);
	if (what == "lbr")
		return run_lbr(path, args->get("--cpu"));
	eprintf("vtice hv: unknown request '%s' (status, caps, break, lbr)\n",
		     what.c_str());
	return kExitUsage;
}

}  // namespace vtice::console
