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
#include <string>
#include <vector>

#include "args.hpp"
#include "device.hpp"
#include "record_rings.hpp"
#include "subcommands.hpp"
#include "syscall_events.hpp"

namespace vtice::console {

namespace {

const char kHelp[] =
	"usage: vtice trace syscalls [--comm NAME] [--pid PID] [--duration SECONDS]\n"
	"                            [-o FILE] [--device PATH]\n"
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
	"  --duration S       stop after S seconds (default: until Ctrl-C)\n"
	"  -o, --output FILE  write the calls to FILE instead of stdout\n"
	"  --device PATH      the vtice device (default /dev/vtice)\n"
	"\n"
	"A call that returns through IRET (execve, rt_sigreturn, a signal on the\n"
	"way out) has no exit event: it shows as '= ? <unfinished>'.\n";

volatile sig_atomic_t g_stop = 0;

void on_signal(int)
{
	g_stop = 1;
}

// No SA_RESTART: the sleep between polls ends at once.
void catch_stop_signals()
{
	struct sigaction sa {};
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);
}

struct Options {
	std::string device = "/dev/" VTICE_DEVICE_NAME;
	std::string comm;
	uint32_t pid = 0;
	double duration = 0;	// 0: until a signal
	std::string output;
};

Result<Options> parse_options(const ParsedArgs &args)
{
	Options o;
	o.device = args.get("--device").value_or(o.device);
	o.output = args.get("--output").value_or("");
	o.comm = args.get("--comm").value_or("");
	if (o.comm.size() > 15)
		return make_error("--comm " + o.comm + ": a comm has at most 15 characters");
	if (auto pid = args.get("--pid")) {
		char *end = nullptr;
		unsigned long v = std::strtoul(pid->c_str(), &end, 10);
		if (pid->empty() || *end || v == 0 || v > 0x3fffffff)
			return make_error("--pid " + *pid + ": not a process id");
		o.pid = static_cast<uint32_t>(v);
	}
	if (auto d = args.get("--duration")) {
		char *end = nullptr;
		o.duration = std::strtod(d->c_str(), &end);
		if (d->empty() || *end || !(o.duration > 0) || o.duration > 1e7)
			return make_error("--duration " + *d + ": a number of seconds above 0");
	}
	return o;
}

Error syscalls_error(const std::string &path, int err)
{
	if (err == EBUSY)
		return make_error(path + ": another 'vtice trace syscalls' owns the syscall events");
	if (err == EOPNOTSUPP)
		return make_error(path + ": no CPU can trap syscalls: the hypervisor needs the VM-entry "
					 "control \"load IA32_EFER\" and CR4.CET clear (docs/tracing.md)");
	return ioctl_error(path, "VTICE_IOC_SYSCALLS", err);
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
			events.insert(events.end(), evs.begin(), evs.end());
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

void poll_rings(std::vector<std::unique_ptr<RecordRing>> &rings, SyscallPrinter &printer)
{
	std::vector<std::vector<vtice_record>> per_cpu(rings.size());
	for (size_t i = 0; i < rings.size(); i++)
		rings[i]->drain(per_cpu[i]);
	printer.feed(per_cpu);
}

void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&ts, nullptr);	// a signal ends it early, which is the point
}

std::string describe_filter(const Options &o)
{
	std::string f;
	if (!o.comm.empty())
		f += "comm " + o.comm;
	if (o.pid)
		f += (f.empty() ? "" : ", ") + std::string("pid ") + std::to_string(o.pid);
	return f.empty() ? "every task" : f;
}

int fail(const Error &e)
{
	std::fprintf(stderr, "vtice trace syscalls: %s\n", e.to_string().c_str());
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
	FILE *out = stdout;
	if (!o.output.empty() && !(out = std::fopen(o.output.c_str(), "w")))
		return fail(make_error(o.output + ": " + std::strerror(errno)));
	for (auto &r : *rings)
		r->skip();
	catch_stop_signals();

	auto req = request<vtice_syscalls>();
	req.op = VTICE_SYSCALLS_ARM;
	req.pid = o.pid;
	std::memcpy(req.comm, o.comm.data(), o.comm.size());
	if (ioctl(dev->get(), VTICE_IOC_SYSCALLS, &req) < 0)
		return fail(syscalls_error(o.device, errno));
	std::fprintf(stderr, "vtice trace syscalls: armed on %u CPUs%s; tracing %s; %s\n", req.cpus_armed,
		     req.cpus_failed ? (" (" + std::to_string(req.cpus_failed) + " could not)").c_str() : "",
		     describe_filter(o).c_str(), o.duration ? "until the duration ends" : "Ctrl-C stops");
	uint64_t seen_before = req.seen, recorded_before = req.recorded;

	SyscallPrinter printer(out);
	auto start = std::chrono::steady_clock::now();
	while (!g_stop) {
		sleep_ms(20);
		poll_rings(*rings, printer);
		std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
		if (o.duration && elapsed.count() >= o.duration)
			break;
	}
	req = request<vtice_syscalls>();
	req.op = VTICE_SYSCALLS_DISARM;
	int disarm = ioctl(dev->get(), VTICE_IOC_SYSCALLS, &req);
	poll_rings(*rings, printer);
	printer.finish();
	if (out != stdout)
		std::fclose(out);
	if (disarm < 0)
		return fail(syscalls_error(o.device, errno));
	std::fprintf(stderr,
		     "vtice trace syscalls: %llu calls printed from %llu events; %llu records lost in the rings%s;"
		     " the hypervisor executed %llu SYSCALL/SYSRET, %llu passed the filter\n",
		     (unsigned long long)printer.calls(), (unsigned long long)printer.stats().events,
		     (unsigned long long)printer.stats().lost,
		     printer.stats().malformed ? (", " + std::to_string(printer.stats().malformed) +
						 " malformed groups skipped").c_str() : "",
		     (unsigned long long)(req.seen - seen_before),
		     (unsigned long long)(req.recorded - recorded_before));
	return kExitOk;
}

}  // namespace

int cmd_trace(int argc, char **argv)
{
	std::vector<char *> expanded = expand_output_option(argc, argv);
	auto args = parse_args(static_cast<int>(expanded.size()), expanded.data(),
			       {{"--device", true}, {"--comm", true}, {"--pid", true}, {"--duration", true},
				{"--output", true}});
	if (!args) {
		std::fprintf(stderr, "vtice trace: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	if (args->positional.size() != 1 || args->positional[0] != "syscalls") {
		std::fprintf(stderr, "vtice trace: expected 'syscalls'\n\n%s", kHelp);
		return kExitUsage;
	}
	auto opts = parse_options(*args);
	if (!opts) {
		std::fprintf(stderr, "vtice trace syscalls: %s\n", opts.error().to_string().c_str());
		return kExitUsage;
	}
	return run_syscalls(*opts);
}

}  // namespace vtice::console
