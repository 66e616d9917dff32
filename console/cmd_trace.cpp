// vtice trace syscalls: syscall events from the hypervisor (local mode,
// through /dev/vtice and its rings), one strace-like line per call.
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "device.hpp"
#include "record_rings.hpp"
#include "messages.hpp"
#include "subcommands.hpp"
#include "syscall_events.hpp"
#include "trace_common.hpp"
#include "vtice/write_output.hpp"

namespace vtice::console {

int cmd_trace_syscall(int argc, char **argv);	// cmd_trace_syscall.cpp

namespace {

const char kHelp[] =
	"usage: vtice trace syscalls [--comm NAME] [--pid PID] [--syscalls NAME,...]\n"
	"                            [--duration SECONDS] [-o FILE] [--device PATH]\n"
	"       vtice trace syscall NAME ...   (the branches of one call: see\n"
	"                                      'vtice trace syscall --help')\n"
	"\n"
	"Streams the syscalls of the whole machine, or of the tasks that match the\n"
	"filter, one line per call like strace -f:\n"
	"  vtsys(4242) openat(-100, 0x7ffd1000, 0, 0) = 3\n"
	"The hypervisor sees each SYSCALL and SYSRET from VMX root: no kprobes,\n"
	"tracepoints or change to the kernel. Root only; needs the vtice module.\n"
	"Stops after --duration, or at Ctrl-C; then prints the calls still running\n"
	"and a summary on stderr (calls, records lost, exits taken).\n"
	"\n"
	"options:\n"
	"  --comm NAME        only tasks with this comm (at most 15 characters)\n"
	"  --pid PID          only this task, or the threads of this process\n"
	"  --syscalls LIST    only these syscalls, by name (openat,read,close): the\n"
	"                     hypervisor records no other; the rest still trap\n"
	"  --duration S       stop after S seconds (default: until Ctrl-C)\n"
	"  -o, --output FILE  write the calls to FILE instead of stdout\n"
	"  --device PATH      the vtice device (default /dev/vtice)\n"
	"\n"
	"A call that returns through IRET (execve, rt_sigreturn, a signal on the\n"
	"way out) has no exit event: it shows as '= ? <unfinished>'.\n";

struct Options {
	std::string device = "/dev/" VTICE_DEVICE_NAME;
	TaskFilter filter;
	SyscallNumbers syscalls;	// empty: every one
	double duration = 0;	// 0: until a signal
	std::string output;
};

// --syscalls openat,read: their numbers, each a name the x86-64 table has.
Result<SyscallNumbers> parse_syscall_names(const std::string &list)
{
	SyscallNumbers numbers;
	std::size_t start = 0;
	while (start <= list.size()) {
		std::size_t comma = std::min(list.find(',', start), list.size());
		std::string name = list.substr(start, comma - start);
		auto nr = trace::syscall_number(name);
		if (!nr)
			return make_error("--syscalls: '" + name + "' is not an x86-64 syscall name (openat, read, ...)");
		numbers.insert(*nr);
		start = comma + 1;
	}
	return numbers;
}

Result<Options> parse_options(const ParsedArgs &args)
{
	Options o;
	o.device = args.get("--device").value_or(o.device);
	o.output = args.get("--output").value_or("");
	RunInputs::get().note_path(o.device);
	if (!o.output.empty())
		if (auto ok = check_output_path(o.output); !ok)
			return make_error("--output: " + ok.error().message);
	auto filter = parse_task_filter(args);
	if (!filter)
		return filter.error();
	o.filter = *filter;
	if (auto list = args.get("--syscalls")) {
		auto numbers = parse_syscall_names(*list);
		if (!numbers)
			return numbers.error();
		o.syscalls = *numbers;
	}
	auto duration = seconds_option(args, "--duration", o.duration, 1e7);
	if (!duration)
		return duration.error();
	o.duration = *duration;
	return o;
}

class SyscallPrinter {
public:
	explicit SyscallPrinter(FILE *out) : out_(out) {}

	// Records of all rings from one poll: each ring's groups are whole.
	void feed(const std::vector<std::vector<vtice_record>> &per_cpu)
	{
		std::vector<trace::SyscallEvent> events;
		for (auto &recs : per_cpu) {
			auto evs = trace::decode_syscall_records(recs, stats_);
			for (auto &ev : evs)
				if (!ev.probe_hit)	// another tool's probes
					events.push_back(std::move(ev));
		}
		std::stable_sort(events.begin(), events.end(),
				 [](auto &a, auto &b) { return a.tsc < b.tsc; });
		for (auto &ev : events)
			print(pairer_.add(ev));
		std::fflush(out_);
	}

	void finish()
	{
		print(pairer_.unfinished());
		std::fflush(out_);
	}

	uint64_t calls() const { return calls_; }
	const trace::SyscallDecodeStats &stats() const { return stats_; }

private:
	void print(const std::vector<trace::SyscallCall> &calls)
	{
		for (auto &c : calls) {
			std::fprintf(out_, "%s\n", trace::format_syscall_call(c).c_str());
			calls_++;
		}
	}

	FILE *out_;
	trace::SyscallPairer pairer_;
	trace::SyscallDecodeStats stats_;
	uint64_t calls_ = 0;
};

// ", openat and close only" for the armed line; "" for every syscall.
std::string describe_syscalls(const SyscallNumbers &numbers)
{
	std::string text;
	std::size_t i = 0;
	for (std::uint64_t nr : numbers)
		text += (i++ == 0 ? ", " : i == numbers.size() ? " and " : ", ") + trace::syscall_name(nr);
	return text.empty() ? text : text + " only";
}

int fail(const Error &e)
{
	eprintf("vtice trace syscalls: %s\n", e.to_string().c_str());
	return kExitFailure;
}

int run_syscalls(const Options &o)
{
	auto dev = open_device(o.device, O_RDWR);
	if (!dev)
		return fail(dev.error());
	auto status = request<vtice_status>();
	if (ioctl(dev->get(), VTICE_IOC_STATUS, &status) < 0)
		return fail(ioctl_error(o.device, "VTICE_IOC_STATUS", errno));
	auto rings = map_record_rings(*dev, o.device, status);
	if (!rings)
		return fail(rings.error());
	std::optional<OutputFile> file;
	if (!o.output.empty()) {
		auto opened = OutputFile::open(o.output);
		if (!opened)
			return fail(opened.error());
		file.emplace(std::move(*opened));
	}
	FILE *out = file ? file->stream() : stdout;
	for (auto &r : *rings)
		r->skip();
	catch_stop_signals();

	auto armed = syscalls_ioctl(*dev, o.device, VTICE_SYSCALLS_ARM, o.filter, {}, o.syscalls);
	if (!armed)
		return fail(armed.error());
	const vtice_syscalls &req = *armed;
	eprintf("vtice trace syscalls: armed on %u CPUs%s; tracing %s%s; %s\n", req.cpus_armed,
		     req.cpus_failed ? (" (" + std::to_string(req.cpus_failed) + " could not)").c_str() : "",
		     describe_filter(o.filter).c_str(), describe_syscalls(o.syscalls).c_str(),
		     o.duration ? "until the duration ends" : "Ctrl-C stops");
	uint64_t seen_before = req.seen, recorded_before = req.recorded;

	SyscallPrinter printer(out);
	auto start = std::chrono::steady_clock::now();
	while (!stop_requested()) {
		sleep_ms(20);
		printer.feed(drain_rings(*rings));
		std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
		if (o.duration && elapsed.count() >= o.duration)
			break;
	}
	auto disarmed = syscalls_ioctl(*dev, o.device, VTICE_SYSCALLS_DISARM);
	printer.feed(drain_rings(*rings));
	printer.finish();
	if (file)
		if (auto written = file->commit(); !written)
			return fail(written.error());
	if (!disarmed)
		return fail(disarmed.error());
	std::fprintf(stderr,
		     "vtice trace syscalls: %llu calls printed from %llu events; %llu records lost in the rings%s;"
		     " the hypervisor executed %llu SYSCALL/SYSRET, %llu passed the filter\n",
		     (unsigned long long)printer.calls(), (unsigned long long)printer.stats().events,
		     (unsigned long long)printer.stats().lost,
		     printer.stats().malformed ? (", " + std::to_string(printer.stats().malformed) +
						 " malformed groups skipped").c_str() : "",
		     (unsigned long long)(disarmed->seen - seen_before),
		     (unsigned long long)(disarmed->recorded - recorded_before));
	return kExitOk;
}

}  // namespace

int cmd_trace(int argc, char **argv)
{
	if (argc > 1 && std::string(argv[1]) == "syscall")
		return cmd_trace_syscall(argc - 1, argv + 1);
	std::vector<char *> expanded = expand_output_option(argc, argv);
	auto args = parse_args(static_cast<int>(expanded.size()), expanded.data(),
			       {{"--device", true}, {"--comm", true}, {"--pid", true}, {"--syscalls", true},
				{"--duration", true}, {"--output", true}});
	if (!args) {
		eprintf("vtice trace: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	if (args->positional.size() != 1 || args->positional[0] != "syscalls") {
		eprintf("vtice trace: expected 'syscalls' or 'syscall NAME'\n\n%s", kHelp);
		return kExitUsage;
	}
	auto opts = parse_options(*args);
	if (!opts) {
		eprintf("vtice trace syscalls: %s\n", opts.error().to_string().c_str());
		return kExitUsage;
	}
	return exit_status(run_syscalls(*opts));
}

}  // namespace vtice::console
