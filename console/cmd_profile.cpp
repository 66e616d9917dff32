// vtice profile: a sampling profiler run from under the kernel
// (docs/profile.md). Each CPU's VMX-preemption timer samples where the CPU
// is, with a copy of its kernel stack (VTICE_IOC_PROFILE); the console
// unwinds the copies with the running kernel's ORC tables and counts.
// The kernel's perf, its NMI watchdog and its timers are not touched.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "device.hpp"
#include "kallsyms_refresh.hpp"
#include "messages.hpp"
#include "profile_ioctl.hpp"
#include "profile_report.hpp"
#include "profile_samples.hpp"
#include "profile_stacks.hpp"
#include "record_rings.hpp"
#include "subcommands.hpp"
#include "trace_common.hpp"
#include "tsc_clock.hpp"
#include "vtice/read_input.hpp"
#include "vtice/write_output.hpp"

namespace vtice::console {
namespace {

const char kHelp[] =
	"usage: vtice profile [--hz N] [--duration S] [--cpu N] [--comm NAME] [--pid PID]\n"
	"                     [-o FILE] [--format folded|perfetto] [--top N] [--stack-bytes N]\n"
	"                     [--device PATH] [--kallsyms PATH] [--kcore PATH]\n"
	"\n"
	"Samples where every CPU is, N times a second, from the hypervisor: the\n"
	"kernel's perf, NMI watchdog and timers are not used and see nothing. Each\n"
	"sample carries a copy of the kernel stack, unwound with the running\n"
	"kernel's ORC tables. Prints the time per CPU (kernel, user, idle) and the\n"
	"top functions; -o writes the stacks for FlameGraph or Perfetto.\n"
	"Root only; needs the vtice module.\n"
	"\n"
	"  vtice profile --duration 10\n"
	"  vtice profile --hz 999 --duration 5 -o out.folded && flamegraph.pl out.folded > out.svg\n"
	"  vtice profile --cpu 1 --format perfetto -o trace.json   (ui.perfetto.dev opens it)\n"
	"  vtice profile --comm dd --duration 5      (dd's CPU time alone)\n"
	"\n"
	"options:\n"
	"  --hz N             samples per second on each CPU (default 99, at most 10000)\n"
	"  --duration S       stop after S seconds (default: Ctrl-C)\n"
	"  --cpu N            sample only CPU N (default: every online CPU)\n"
	"  --comm NAME        record only the samples of tasks named NAME; the\n"
	"                     hypervisor drops the others (no idle time is then shown)\n"
	"  --pid PID          ...of the task or process PID (its pid or tgid)\n"
	"  -o, --output FILE  the stacks: folded lines (\"comm;root;...;leaf count\", as\n"
	"                     flamegraph.pl reads them) or, with --format perfetto, a\n"
	"                     trace-event JSON timeline\n"
	"  --format F         folded (default) or perfetto\n"
	"  --top N            functions listed (default 20)\n"
	"  --stack-bytes N    kernel stack copied per sample (default 1024, at most 2048,\n"
	"                     a multiple of 16; 0: the sampled function alone)\n"
	"  --device PATH      the vtice device (default /dev/vtice)\n"
	"  --kallsyms PATH    kernel symbols (default /proc/kallsyms)\n"
	"  --kcore PATH       kernel memory, for the ORC tables (default /proc/kcore)\n";

enum class Format { folded, perfetto };

struct Options {
	std::uint32_t hz = 99;
	double duration = 0;
	std::int32_t cpu = VTICE_PROFILE_ALL_CPUS;
	TaskFilter filter;	// the samples root records; empty: all
	std::string output;
	Format format = Format::folded;
	std::size_t top = 20;
	std::uint32_t stack_bytes = 1024;
	std::string device = "/dev/" VTICE_DEVICE_NAME;
	std::string kallsyms = "/proc/kallsyms";
	std::string kcore = "/proc/kcore";
};

constexpr long kPollMs = 10;
// Where struct module keeps its ORC tables comes from the kernel's BTF.
constexpr const char *kKernelBtf = "/sys/kernel/btf/vmlinux";
constexpr double kProgressSeconds = 2;

Result<Options> parse_numbers(const ParsedArgs &args, Options o)
{
	auto hz = count_option(args, "--hz", o.hz, 1, VTICE_PROFILE_HZ_MAX);
	if (!hz)
		return hz.error();
	o.hz = static_cast<std::uint32_t>(*hz);
	auto duration = seconds_option(args, "--duration", o.duration, 1e7);
	if (!duration)
		return duration.error();
	o.duration = *duration;
	if (auto v = args.get("--cpu")) {	// absent: every CPU
		auto cpu = parse_count("--cpu", *v, 0, VTICE_MAX_CPUS - 1);
		if (!cpu)
			return cpu.error();
		o.cpu = static_cast<std::int32_t>(*cpu);
	}
	auto top = count_option(args, "--top", o.top, 1, 100'000);
	if (!top)
		return top.error();
	o.top = *top;
	auto bytes = count_option(args, "--stack-bytes", o.stack_bytes, 0, VTICE_PROFILE_STACK_MAX);
	if (!bytes)
		return bytes.error();
	if (*bytes % 16)
		return make_error("--stack-bytes: " + std::to_string(*bytes) + " is not a multiple of 16");
	o.stack_bytes = static_cast<std::uint32_t>(*bytes);
	return o;
}

Result<Options> parse_options(const ParsedArgs &args)
{
	if (!args.positional.empty())
		return make_error("unexpected argument '" + args.positional[0] + "'");
	auto o = parse_numbers(args, Options{});
	if (!o)
		return o.error();
	auto filter = parse_task_filter(args);
	if (!filter)
		return filter.error();
	o->filter = *filter;
	if (auto f = args.get("--format")) {
		if (*f != "folded" && *f != "perfetto")
			return make_error("--format: expected folded or perfetto, not '" + *f + "'");
		o->format = *f == "perfetto" ? Format::perfetto : Format::folded;
		if (!args.get("--output"))
			return make_error("--format needs -o FILE");
	}
	o->device = args.get("--device").value_or(o->device);
	o->kallsyms = args.get("--kallsyms").value_or(o->kallsyms);
	o->kcore = args.get("--kcore").value_or(o->kcore);
	for (const std::string *input : {&o->device, &o->kallsyms, &o->kcore})
		RunInputs::get().note_path(*input);
	o->output = args.get("--output").value_or("");
	if (!o->output.empty())
		if (auto ok = check_output_path(o->output); !ok)
			return make_error("--output: " + ok.error().message);
	return o;
}

int fail(const Error &e)
{
	eprintf("vtice profile: %s\n", e.to_string().c_str());
	return kExitFailure;
}

// The device, its rings and the profiler it arms; closing it disarms.
struct Sampler {
	DeviceFd dev;
	std::vector<std::unique_ptr<RecordRing>> rings;
	std::uint64_t samples_before = 0;
};

Result<Sampler> arm(const Options &o)
{
	auto dev = open_device(o.device, O_RDWR);
	if (!dev)
		return dev.error();
	auto status = read_status(*dev, o.device);
	if (!status)
		return status.error();
	auto rings = map_record_rings(*dev, o.device, *status);
	if (!rings)
		return rings.error();
	for (auto &r : *rings)
		r->skip();
	auto armed = profile_ioctl(*dev, o.device, profile_arm_request(o.hz, o.stack_bytes, o.cpu, o.filter));
	if (!armed)
		return armed.error();
	eprintf("vtice profile: sampling %u CPU%s at %u Hz, recording %s; %s\n", armed->armed,
		armed->armed == 1 ? "" : "s", o.hz, describe_filter(o.filter).c_str(),
		o.duration ? "until the duration ends" : "Ctrl-C stops");
	return Sampler{std::move(*dev), std::move(*rings), armed->samples};
}

// The run's consumers of samples: the counts, and the timeline when asked for.
class SampleSink {
public:
	SampleSink(const Options &o, std::unique_ptr<dbg::SymbolList> symbols, const symbols::OrcTables *orc,
		   const TscClock &clock, std::FILE *timeline_file)
		: orc_(orc), period_tsc_(static_cast<std::uint64_t>(clock.ticks_per_ns() * 1e9 / o.hz)),
		  report_(period_tsc_)
	{
		use_symbols(std::move(symbols));
		if (timeline_file)
			timeline_.emplace(timeline_file, clock.ticks_per_ns() * 1000, period_tsc_);
	}

	// Names from now on come from these (a module came or went).
	void use_symbols(std::unique_ptr<dbg::SymbolList> symbols)
	{
		symbols_ = std::move(symbols);
		namer_.emplace([list = symbols_.get()](std::uint64_t a) { return list->symbolize(a); });
	}

	void feed(const std::vector<std::vector<vtice_record>> &per_cpu)
	{
		for (const auto &recs : per_cpu)
			for (const auto &sample : trace::decode_profile_records(recs, stats_)) {
				SampleStack stack = unwind_sample(orc_, sample, kMaxSampleFrames);
				std::vector<std::string> names = namer_->names(sample, stack);
				report_.add(sample, names, stack.truncated);
				if (timeline_)
					timeline_->add(sample, names);
			}
	}

	void finish()
	{
		if (timeline_)
			timeline_->finish();
	}
	const ProfileReport &report() const { return report_; }
	const trace::ProfileDecodeStats &stats() const { return stats_; }

private:
	const symbols::OrcTables *orc_;
	std::unique_ptr<dbg::SymbolList> symbols_;
	std::optional<FrameNamer> namer_;
	std::uint64_t period_tsc_;
	ProfileReport report_;
	std::optional<ProfileTimeline> timeline_;
	trace::ProfileDecodeStats stats_;
};

void show_progress(double seconds, std::uint64_t samples)
{
	if (isatty(STDERR_FILENO))
		eprintf("\rvtice profile: %.0f s, %llu samples ", seconds, static_cast<unsigned long long>(samples));
}

void report_summary(const SampleSink &sink, std::uint64_t recorded, double seconds)
{
	if (isatty(STDERR_FILENO))
		eprintf("\n");
	if (sink.stats().lost)
		eprintf("vtice profile: warning: the rings filled before the console read them and %llu records "
			"were lost (counted in 'unsampled'): --stack-bytes copies less per sample, the module's "
			"ring_records parameter gives each CPU more room\n",
			static_cast<unsigned long long>(sink.stats().lost));
	std::printf("%llu samples in %.1f s; the hypervisor recorded %llu; %llu records lost in the rings%s\n\n",
		    static_cast<unsigned long long>(sink.report().samples()), seconds,
		    static_cast<unsigned long long>(recorded), static_cast<unsigned long long>(sink.stats().lost),
		    sink.stats().malformed
			    ? (", " + std::to_string(sink.stats().malformed) + " malformed samples skipped").c_str()
			    : "");
}

// The ORC tables, or none (with a warning): each sample then names its function alone.
std::unique_ptr<RunningOrc> load_orc(const Options &o, const dbg::SymbolSource &symbols)
{
	if (o.stack_bytes == 0)
		return nullptr;
	KernelBtf btf(kKernelBtf);
	auto orc = RunningOrc::load(symbols, o.kcore, btf);
	if (!orc) {
		eprintf("vtice profile: warning: %s; each sample names its function alone\n",
			orc.error().to_string().c_str());
		return nullptr;
	}
	for (const std::string &w : (*orc)->warnings())
		eprintf("vtice profile: warning: %s\n", w.c_str());
	return std::move(*orc);
}

int run(const Options &o)
{
	KallsymsRefresh kallsyms(o.kallsyms);
	auto symbols = read_running_kallsyms(o.kallsyms, "entry_SYSCALL_64");
	if (!symbols)
		return fail(symbols.error());
	auto orc = load_orc(o, **symbols);
	std::optional<OutputFile> file;
	if (!o.output.empty()) {
		auto opened = OutputFile::open(o.output);
		if (!opened)
			return fail(opened.error());
		file.emplace(std::move(*opened));
	}
	TscClock clock;
	SampleSink sink(o, std::move(*symbols), orc ? &orc->tables() : nullptr, clock,
			file && o.format == Format::perfetto ? file->stream() : nullptr);
	catch_stop_signals();
	auto sampler = arm(o);
	if (!sampler)
		return fail(sampler.error());
	std::uint64_t start = TscClock::now_ns(), last_progress = start;
	auto elapsed = [&start] { return static_cast<double>(TscClock::now_ns() - start) / 1e9; };
	while (!stop_requested() && !(o.duration && elapsed() >= o.duration)) {
		sleep_ms(kPollMs);
		sink.feed(drain_rings(sampler->rings));
		if (TscClock::now_ns() - last_progress >= kProgressSeconds * 1e9) {
			show_progress(elapsed(), sink.report().samples());
			last_progress = TscClock::now_ns();
		}
		if (auto fresh = kallsyms.poll(TscClock::now_ns())) {
			sink.use_symbols(std::move(fresh));
			if (orc)
				orc->reload_modules();
			eprintf("vtice profile: a module came or went: %s read again\n", o.kallsyms.c_str());
		}
	}
	auto req = request<vtice_profile>();
	req.op = VTICE_PROFILE_DISARM;
	auto disarmed = profile_ioctl(sampler->dev, o.device, req);
	sink.feed(drain_rings(sampler->rings));
	if (!disarmed)
		return fail(disarmed.error());
	sink.finish();
	report_summary(sink, disarmed->samples - sampler->samples_before, elapsed());
	sink.report().write_text(stdout, o.top);
	if (file && o.format == Format::folded)
		sink.report().write_folded(file->stream());
	std::fflush(stdout);
	if (file)
		if (auto written = file->commit(); !written)
			return fail(written.error());
	return kExitOk;
}

}  // namespace

int cmd_profile(int argc, char **argv)
{
	std::vector<char *> expanded = expand_output_option(argc, argv);
	auto args = parse_args(static_cast<int>(expanded.size()), expanded.data(),
			       {{"--hz", true}, {"--duration", true}, {"--cpu", true}, {"--output", true},
				{"--format", true}, {"--top", true}, {"--stack-bytes", true}, {"--device", true},
				{"--kallsyms", true}, {"--kcore", true}, {"--comm", true}, {"--pid", true}});
	if (!args) {
		eprintf("vtice profile: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	auto opts = parse_options(*args);
	if (!opts) {
		eprintf("vtice profile: %s (vtice profile --help)\n", opts.error().to_string().c_str());
		return kExitUsage;
	}
	return exit_status(run(*opts));
}

}  // namespace vtice::console
