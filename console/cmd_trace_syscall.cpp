// vtice trace syscall NAME: the branches of the next calls of one syscall,
// recorded by the hypervisor on this machine (VTICE_IOC_PATH_TRACE, the
// per-CPU rings) and rendered like ftrace's function_graph. The code the
// records ran through is read from /proc/kcore, the names from
// /proc/kallsyms.
#include <fcntl.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "args.hpp"
#include "device.hpp"
#include "path_calls.hpp"
#include "record_rings.hpp"
#include "root_accesses.hpp"
#include "root_steps.hpp"
#include "messages.hpp"
#include "subcommands.hpp"
#include "symbol_source.hpp"
#include "syscall_events.hpp"
#include "trace/kcore.hpp"
#include "trace/trace_output.hpp"
#include "trace_common.hpp"
#include "vtice/read_input.hpp"
#include "vtice/write_output.hpp"

namespace vtice::console {

// VTICE_RING_WAIT_MS and VTICE_RING_END_WAIT_MS as text, for the help.
#define VTICE_TEXT_OF(x) #x
#define VTICE_TEXT(x) VTICE_TEXT_OF(x)
#define VTICE_WAIT_MS_TEXT VTICE_TEXT(VTICE_RING_WAIT_MS)
#define VTICE_END_WAIT_MS_TEXT VTICE_TEXT(VTICE_RING_END_WAIT_MS)

namespace {

const char kHelp[] =
	"usage: vtice trace syscall NAME [--comm NAME|--pid PID] [--count N]\n"
	"                            [--max-insns N] [--timeout SECONDS] [-o FILE]\n"
	"                            [--step all|task] [--record] [--quiet]\n"
	"                            [--device PATH]\n"
	"                            [--kcore PATH] [--kallsyms PATH]\n"
	"\n"
	"Waits for the next call of syscall NAME (openat, read, ...) by a task that\n"
	"matches the filter, has the hypervisor record every branch that task takes\n"
	"in the kernel from its SYSCALL to its return (on whichever CPU it runs),\n"
	"and prints the call and its function graph, like ftrace's function_graph:\n"
	"no ftrace, kprobes or change to the kernel. Interrupts and exceptions taken\n"
	"during the call are their own subtrees, marked as such. Root only; needs\n"
	"the vtice module. How it steps depends on the CPU and the module's\n"
	"trace_mode: TF + DEBUGCTL.BTF (one VM exit per taken branch), the monitor\n"
	"trap flag or TF (one per instruction); the line 'armed on' says which\n"
	"(docs/tracing.md).\n"
	"\n"
	"options:\n"
	"  --comm NAME        only a task with this comm (at most 15 characters)\n"
	"  --pid PID          only this task, or a thread of this process\n"
	"  --count N          trace N calls, one after the other (default 1)\n"
	"  --max-insns N      end a call's trace after N of its instructions\n"
	"                     (default 1000000)\n"
	"  --timeout S        give up after S seconds (default: wait until Ctrl-C)\n"
	"  -o, --output FILE  also write the trace file ('vtice report FILE')\n"
	"  --step all|task    which CPUs a traced call steps: all (the default), or\n"
	"                     only the one its task runs on, followed across CPUs by\n"
	"                     a hidden breakpoint in __switch_to (experimental: see\n"
	"                     docs/tracing.md, \"The switch trigger\")\n"
	"  --record           also record what each step of the call changed (its\n"
	"                     registers, the memory it read and wrote) into the -o\n"
	"                     file, for 'vtice replay FILE' (docs/replay.md); one\n"
	"                     call; needs the monitor trap flag\n"
	"  --quiet            print the summary lines, not the graph\n"
	"  --device PATH      the vtice device (default /dev/vtice)\n"
	"  --kcore PATH       kernel memory (default /proc/kcore)\n"
	"  --kallsyms PATH    kernel symbols (default /proc/kallsyms)\n"
	"\n"
	"Cost: while waiting, two VM exits per syscall of any task; while the call\n"
	"is traced, one VM exit per instruction (or branch) on every CPU (--step\n"
	"task: on the CPU that runs the task; one exit per context switch). Records\n"
	"a full ring cannot take wait in the hypervisor (up to the module's\n"
	"trace_records, default 32768 a CPU), then the traced CPU waits for this\n"
	"reader (up to " VTICE_WAIT_MS_TEXT " ms in the call, " VTICE_END_WAIT_MS_TEXT " ms at its SYSCALL or\n"
	"SYSRET; the other CPUs run unstepped meanwhile);\n"
	"what is lost anyway is counted and shown (docs/tracing.md).\n";

constexpr std::uint64_t kDefaultMaxInsns = 1'000'000;
constexpr long kPollMs = 2;

struct Options {
	std::string name;
	std::uint32_t nr = 0;
	TaskFilter filter;
	std::uint32_t count = 1;
	std::uint64_t max_insns = kDefaultMaxInsns;
	double timeout = 0;	// 0: until a signal
	std::string output;
	bool quiet = false;
	bool step_task_only = false;	// --step task
	bool record = false;
	std::string device = "/dev/" VTICE_DEVICE_NAME;
	std::string kcore = "/proc/kcore";
	std::string kallsyms = "/proc/kallsyms";
};

Result<Options> parse_options(const ParsedArgs &args)
{
	Options o;
	o.name = args.positional[0];
	auto nr = trace::syscall_number(o.name);
	if (!nr)
		return make_error("'" + o.name + "' is not an x86-64 syscall name (openat, read, ...)");
	o.nr = static_cast<std::uint32_t>(*nr);
	auto filter = parse_task_filter(args);
	if (!filter)
		return filter.error();
	o.filter = *filter;
	auto count = count_option(args, "--count", 1, 1, VTICE_PATH_MAX_CALLS);
	auto max_insns = count_option(args, "--max-insns", kDefaultMaxInsns, 1, VTICE_PATH_MAX_INSNS);
	if (!count || !max_insns)
		return !count ? count.error() : max_insns.error();
	o.count = static_cast<std::uint32_t>(*count);
	o.max_insns = *max_insns;
	auto timeout = seconds_option(args, "--timeout", o.timeout, 1e7);
	if (!timeout)
		return timeout.error();
	o.timeout = *timeout;
	o.output = args.get("--output").value_or("");
	o.quiet = args.has("--quiet");
	o.record = args.has("--record");
	if (o.record && o.output.empty())
		return make_error("--record: needs -o FILE, where the recording goes");
	if (o.record && o.count != 1)
		return make_error("--record records one call: leave out --count");
	if (auto step = args.get("--step")) {
		if (*step != "all" && *step != "task")
			return make_error("--step " + *step + ": all or task");
		o.step_task_only = *step == "task";
	}
	o.device = args.get("--device").value_or(o.device);
	o.kcore = args.get("--kcore").value_or(o.kcore);
	o.kallsyms = args.get("--kallsyms").value_or(o.kallsyms);
	for (const std::string *input : {&o.device, &o.kcore, &o.kallsyms})
		RunInputs::get().note_path(*input);
	if (!o.output.empty())
		if (auto ok = check_output_path(o.output); !ok)
			return make_error("--output: " + ok.error().message);
	return o;
}

// The running kernel as the renderer needs it: its names and its text.
struct LocalKernel {
	std::unique_ptr<dbg::SymbolList> symbols;
	std::unique_ptr<dbg::Kcore> kcore;
};

Result<LocalKernel> open_local_kernel(const Options &o)
{
	auto symbols = read_running_kallsyms(o.kallsyms, "entry_SYSCALL_64");
	if (!symbols)
		return symbols.error();
	auto kcore = dbg::Kcore::open(o.kcore);
	if (!kcore)
		return kcore.error();
	return LocalKernel{std::move(*symbols), std::make_unique<dbg::Kcore>(std::move(*kcore))};
}

// One call as the debugger's tracers hand a trace to the renderer.
dbg::TraceResult to_trace(const PathCall &call, const dbg::Kcore &kcore)
{
	dbg::TraceResult t;
	t.records = call.records;
	t.tsc_clock = true;
	t.returned = call.stop == VTICE_TRACE_STOP_SYSRET || call.stop == VTICE_TRACE_STOP_USER;
	t.migrations = call.moves;
	for (std::uint64_t page : dbg::code_pages(t.records, 0))
		if (auto bytes = kcore.read(page, 4096))
			t.code[page] = std::move(*bytes);
	return t;
}

const char *stop_reason(std::uint32_t stop)
{
	switch (stop) {
	case VTICE_TRACE_STOP_SYSRET:
		return "returned (SYSRET)";
	case VTICE_TRACE_STOP_USER:
		return "returned to user mode without SYSRET (IRET)";
	case VTICE_TRACE_STOP_MAX_INSNS:
		return "cut at --max-insns";
	case VTICE_TRACE_STOP_DISARMED:
		return "cut: the trace was stopped";
	default:
		return "still running when the trace stopped";
	}
}

class CallReporter {
public:
	CallReporter(const Options &o, const LocalKernel &kernel, const std::vector<std::unique_ptr<RecordRing>> &rings)
		: o_(o), kernel_(kernel), rings_(rings), symbolize_(dbg::make_symbolizer(kernel.symbols.get())),
		  seen_(ring_counts())
	{
	}

	// At each read of the rings. A traced CPU waits VTICE_RING_WAIT_MS for the
	// reader (VTICE_RING_END_WAIT_MS at the call's end), so a gap longer than
	// that, shown with the call's waits, is where records went.
	void note_drain()
	{
		auto now = std::chrono::steady_clock::now();
		longest_gap_ = std::max<std::chrono::duration<double, std::milli>>(longest_gap_, now - last_drain_);
		last_drain_ = now;
	}

	void report(const PathCall &call)
	{
		RingCounts since = counts_since_last_call();
		std::uint64_t lost = std::max(call.lost, since.lost);
		dbg::TraceResult t = to_trace(call, *kernel_.kcore);
		std::printf("%s\n", trace::format_syscall_call(call.call).c_str());
		trace::RenderedTrace rendering = dbg::render_trace(t, symbolize_, {.price_branch_steps = true});
		if (!o_.quiet)
			std::fputs(rendering.text.c_str(), stdout);
		std::size_t async = 0, branches = 0;
		std::uint64_t first_tsc = UINT64_MAX, last_tsc = 0;
		for (const auto &r : t.records) {
			branches += r.type == VTICE_REC_BRANCH;
			async += r.type == VTICE_REC_BRANCH && (r.flags & VTICE_BRANCH_ASYNC);
			first_tsc = std::min<std::uint64_t>(first_tsc, r.tsc);
			last_tsc = std::max<std::uint64_t>(last_tsc, r.tsc);
		}
		std::printf("trace: call %zu: %llu instructions stepped, %llu decoded into %zu calls; %zu taken "
			    "branches (%zu interrupts or exceptions); %llu records lost; %llu moves to another CPU "
			    "(shown as one timeline); %s\n",
			    ++calls_, static_cast<unsigned long long>(call.insns),
			    static_cast<unsigned long long>(rendering.instructions), rendering.calls, branches, async,
			    static_cast<unsigned long long>(lost), static_cast<unsigned long long>(call.moves),
			    stop_reason(call.stop));
		std::printf("trace: call %zu: %llu TSC cycles from entry to return, traced; VM exits: %llu "
			    "stepping each instruction (MTF or TF); %llu stepping each taken branch (TF + "
			    "DEBUGCTL.BTF, by model: the decoded instructions, their interrupts, and plain steps "
			    "over TF hazards; docs/tracing.md)\n",
			    calls_, static_cast<unsigned long long>(last_tsc > first_tsc ? last_tsc - first_tsc : 0),
			    static_cast<unsigned long long>(call.insns + async),
			    static_cast<unsigned long long>(rendering.btf_exits));
		if (since.waits)
			std::printf("trace: call %zu: a traced CPU found its ring full %llu times and waited "
				    "for this reader; %llu of the waits ran out; the reader's longest gap "
				    "between two reads of the rings was %.0f ms\n",
				    calls_, static_cast<unsigned long long>(since.waits),
				    static_cast<unsigned long long>(since.run_out), longest_gap_.count());
		longest_gap_ = {};
		std::fflush(stdout);
		lost_ += lost;
		if (o_.record)
			keep_recording(call, t.code);
		merge(std::move(t));
	}

	Result<void> write_file() const
	{
		if (o_.output.empty())
			return {};
		return dbg::write_trace_file(o_.output, all_, kernel_.symbols.get(), 0);
	}

	std::size_t calls() const { return calls_; }
	std::uint64_t lost() const { return lost_; }

private:
	struct RingCounts {
		std::uint64_t lost = 0, waits = 0, run_out = 0;
	};

	// A full ring announces its drops with a LOST record before its next
	// record, which may never come (the trace ended); its header's running
	// count is always right.
	RingCounts ring_counts() const
	{
		RingCounts total;
		for (const auto &r : rings_) {
			total.lost += r->lost();
			total.waits += r->waits();
			total.run_out += r->waits_run_out();
		}
		return total;
	}

	RingCounts counts_since_last_call()
	{
		RingCounts now = ring_counts(), since{now.lost - seen_.lost, now.waits - seen_.waits,
						      now.run_out - seen_.run_out};
		seen_ = now;
		return since;
	}

	// The call's steps as a replay reads them, into the file with it.
	void keep_recording(const PathCall &call, const std::map<std::uint64_t, std::vector<std::uint8_t>> &code)
	{
		auto steps = replay::steps_from_records(call.steps);
		if (!steps) {
			std::printf("record: call %zu: %s\n", calls_, steps.error().message.c_str());
			return;
		}
		replay::RootAccesses decoded = replay::decode_root_accesses(steps->recording, code);
		std::uint64_t bytes = steps->recording.initial.size();
		for (const replay::Step &s : steps->recording.steps)
			bytes += replay::encoded_size(s);
		std::size_t n = steps->recording.steps.size();
		std::printf("record: call %zu: %zu steps recorded in the hypervisor, %llu operands read, %llu "
			    "8-byte windows written; %llu bytes of registers and memory (%.1f bytes per step)%s%s\n",
			    calls_, n, static_cast<unsigned long long>(steps->reads),
			    static_cast<unsigned long long>(steps->writes), static_cast<unsigned long long>(bytes),
			    static_cast<double>(bytes) / static_cast<double>(n), steps->cut.empty() ? "" : "; cut: ",
			    steps->cut.c_str());
		std::printf("record: call %zu: decoded: %llu stores of the value already there; %llu stores with "
			    "bytes no 8-byte window of the hypervisor's saw, %llu bytes unknown from there on; %llu "
			    "steps whose instruction was not in the text read, kept as root gave them\n",
			    calls_, static_cast<unsigned long long>(decoded.same_value_stores),
			    static_cast<unsigned long long>(decoded.unseen_stores),
			    static_cast<unsigned long long>(decoded.unseen_bytes),
			    static_cast<unsigned long long>(decoded.undecoded));
		all_.recording = std::move(steps->recording);
	}

	// Every call goes into the one file, each its own tree.
	void merge(dbg::TraceResult t)
	{
		all_.records.insert(all_.records.end(), t.records.begin(), t.records.end());
		all_.code.merge(t.code);
		all_.tsc_clock = true;
	}

	const Options &o_;
	const LocalKernel &kernel_;
	const std::vector<std::unique_ptr<RecordRing>> &rings_;
	Symbolizer symbolize_;
	RingCounts seen_;	// the rings' counts when last looked at
	dbg::TraceResult all_;
	std::size_t calls_ = 0;
	std::uint64_t lost_ = 0;
	std::chrono::steady_clock::time_point last_drain_ = std::chrono::steady_clock::now();
	std::chrono::duration<double, std::milli> longest_gap_{};	// since the last call's report
};

int fail(const Error &e)
{
	eprintf("vtice trace syscall: %s\n", e.to_string().c_str());
	return kExitFailure;
}

Result<vtice_path_trace> path_ioctl(const DeviceFd &dev, const std::string &path, vtice_path_trace req)
{
	if (ioctl(dev.get(), VTICE_IOC_PATH_TRACE, &req) < 0)
		return trap_error(path, "VTICE_IOC_PATH_TRACE", errno);
	return req;
}

// --step task: __switch_to names where the module plants its switch
// trigger, so only the CPU that runs the traced task is stepped
// (docs/tracing.md, "The switch trigger").
Result<vtice_path_trace> arm(const DeviceFd &dev, const Options &o, const LocalKernel &kernel)
{
	auto req = request<vtice_path_trace>();
	req.op = VTICE_PATH_ARM;
	if (o.step_task_only)
		req.switch_to = kernel.symbols->lookup("__switch_to").value_or(0);
	req.pid = o.filter.pid;
	std::memcpy(req.comm, o.filter.comm.data(), o.filter.comm.size());
	req.nr = o.nr;
	req.calls = o.count;
	req.max_insns = o.max_insns;
	req.flags = o.record ? VTICE_PATH_RECORD : 0;
	auto armed = path_ioctl(dev, o.device, req);
	if (!armed && o.record && errno == EINVAL)
		return make_error("--record: the hypervisor steps with TF on this CPU, not the monitor trap flag, "
				  "and records only MTF steps (docs/replay.md)");
	return armed;
}

// Until every call asked for is reported, the timeout, or Ctrl-C.
// A call that takes long to trace (stepped, about a thousand times slower)
// says how far it got.
class Progress {
public:
	void tick(const PathCallCollector &collector, std::size_t calls_done)
	{
		auto now = std::chrono::steady_clock::now();
		if (!collector.pending()) {
			since_ = now;
			return;
		}
		std::chrono::duration<double> waited = now - since_, last = now - last_;
		if (waited.count() < kEverySeconds || last.count() < kEverySeconds)
			return;
		last_ = now;
		eprintf("vtice trace syscall: tracing call %zu: %zu records so far, %.0f s\n",
			     calls_done + 1, collector.pending(), waited.count());
	}

private:
	static constexpr double kEverySeconds = 10;
	std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now(), last_ = since_;
};

void wait_for_calls(const Options &o, std::vector<std::unique_ptr<RecordRing>> &rings,
		    PathCallCollector &collector, CallReporter &reporter)
{
	auto start = std::chrono::steady_clock::now();
	Progress progress;
	while (!stop_requested() && reporter.calls() < o.count) {
		sleep_ms(kPollMs);
		reporter.note_drain();
		for (const PathCall &call : collector.feed(drain_rings(rings)))
			reporter.report(call);
		progress.tick(collector, reporter.calls());
		std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
		if (o.timeout && elapsed.count() >= o.timeout) {
			eprintf("vtice trace syscall: no more calls after %.1f s (--timeout)\n", o.timeout);
			break;
		}
	}
}

int run(const Options &o)
{
	// The kernel's names and text first: files the user may have named.
	auto kernel = open_local_kernel(o);
	if (!kernel)
		return fail(kernel.error());
	auto dev = open_device(o.device, O_RDWR);
	if (!dev)
		return fail(dev.error());
	auto status = request<vtice_status>();
	if (ioctl(dev->get(), VTICE_IOC_STATUS, &status) < 0)
		return fail(ioctl_error(o.device, "VTICE_IOC_STATUS", errno));
	auto rings = map_record_rings(*dev, o.device, status);
	if (!rings)
		return fail(rings.error());
	for (auto &r : *rings)
		r->skip();
	PathCallCollector collector;
	CallReporter reporter(o, *kernel, *rings);
	catch_stop_signals();
	auto armed = arm(*dev, o, *kernel);
	if (!armed)
		return fail(armed.error());
	std::fprintf(stderr,
		     "vtice trace syscall: armed on %u CPUs%s (%s, %s); waiting for %s by %s; %s\n",
		     armed->cpus_armed,
		     armed->cpus_failed ? (", " + std::to_string(armed->cpus_failed) + " could not").c_str() : "",
		     describe_mechanism(armed->mechanism), describe_stepping(armed->stepping),
		     o.name.c_str(), describe_filter(o.filter).c_str(),
		     o.timeout ? "until the timeout" : "Ctrl-C stops");
	if (o.step_task_only && armed->stepping != VTICE_PATH_STEP_TASK)
		eprintf("vtice trace syscall: --step task: %s; every CPU is stepped instead\n",
			kernel->symbols->lookup("__switch_to")
				? "the module did not plant its switch trigger (why: dmesg | grep vtice)"
				: "no __switch_to in the kernel's symbols");
	wait_for_calls(o, *rings, collector, reporter);
	auto disarm = request<vtice_path_trace>();
	disarm.op = VTICE_PATH_DISARM;
	auto disarmed = path_ioctl(*dev, o.device, disarm);
	for (const PathCall &call : collector.feed(drain_rings(*rings)))
		reporter.report(call);
	for (const PathCall &call : collector.finish())
		reporter.report(call);
	if (!disarmed)
		return fail(disarmed.error());
	if (auto r = reporter.write_file(); !r)
		return fail(r.error());
	if (!o.output.empty())
		eprintf("vtice trace syscall: wrote %s (vtice report %s)\n", o.output.c_str(),
			     o.output.c_str());
	if (reporter.lost())
		eprintf("vtice trace syscall: %llu records lost: a traced CPU waited %d ms (%d ms at the "
			"call's end) for this reader to drain its full ring and went on (see "
			"docs/tracing.md); a larger trace_records or ring_records (module parameters) "
			"gives the reader more time\n",
			static_cast<unsigned long long>(reporter.lost()), VTICE_RING_WAIT_MS,
			VTICE_RING_END_WAIT_MS);
	return reporter.calls() >= o.count ? kExitOk : kExitFailure;
}

}  // namespace

int cmd_trace_syscall(int argc, char **argv)
{
	std::vector<char *> expanded = expand_output_option(argc, argv);
	auto args = parse_args(static_cast<int>(expanded.size()), expanded.data(),
			       {{"--device", true}, {"--comm", true}, {"--pid", true}, {"--count", true},
				{"--max-insns", true}, {"--timeout", true}, {"--output", true}, {"--quiet", false},
				{"--step", true}, {"--record", false},
				{"--kcore", true}, {"--kallsyms", true}});
	if (!args) {
		eprintf("vtice trace syscall: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	if (args->positional.size() != 1) {
		eprintf("vtice trace syscall: expected one syscall name\n\n%s", kHelp);
		return kExitUsage;
	}
	auto opts = parse_options(*args);
	if (!opts) {
		eprintf("vtice trace syscall: %s\n", opts.error().to_string().c_str());
		return kExitUsage;
	}
	return exit_status(run(*opts));
}

}  // namespace vtice::console
