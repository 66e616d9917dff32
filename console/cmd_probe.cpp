// vtice probe 'PROGRAM': bpftrace-style probes run from under the kernel
// (docs/probes.md). This version fires on the hypervisor's syscall events
// (VTICE_IOC_SYSCALLS), its hidden function breakpoints and its profile
// samples (VTICE_IOC_PROFILE), all through the per-CPU rings, and runs the
// program in the console; the kernel sees no kprobe, tracepoint, perf event
// or changed byte.
#include <fcntl.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "checker.hpp"
#include "device.hpp"
#include "diagnostic.hpp"
#include "kallsyms_refresh.hpp"
#include "messages.hpp"
#include "output.hpp"
#include "probe_feed.hpp"
#include "probe_folded.hpp"
#include "probe_functions.hpp"
#include "probe_params.hpp"
#include "profile_ioctl.hpp"
#include "profile_report.hpp"
#include "profile_stacks.hpp"
#include "record_rings.hpp"
#include "runtime.hpp"
#include "subcommands.hpp"
#include "syscall_events.hpp"
#include "trace_common.hpp"
#include "tsc_clock.hpp"
#include "vtice/read_input.hpp"
#include "vtice/write_output.hpp"

namespace vtice::console {
namespace {

const char kHelp[] =
	"usage: vtice probe 'PROGRAM' [--duration S] [-o FILE] [--folded FILE]\n"
	"                             [--max-entries N] [--check] [--device PATH]\n"
	"                             [--kallsyms PATH] [--kcore PATH] [--btf PATH]\n"
	"       vtice probe --file PATH ...\n"
	"\n"
	"Runs a probe program in the spirit of bpftrace on this machine, from the\n"
	"hypervisor: the kernel runs no kprobe, tracepoint or eBPF and no byte of it\n"
	"changes. Root only; needs the vtice module (not --check).\n"
	"\n"
	"  vtice probe 'syscall:read { @[comm] = count(); }'\n"
	"  vtice probe 'fn:vfs_read /comm == \"cat\"/ { @bytes = sum(arg2); }'\n"
	"  vtice probe 'fn:do_sys_openat2 { printf(\"%s\\n\", str(args->filename)); }'\n"
	"  vtice probe 'fn:do_sys_openat2 { printf(\"%x\\n\", args->how->flags); }'\n"
	"  vtice probe 'fn:vfs_read { @[str(((struct file *)arg0)->f_path.dentry->d_name.name)] = count(); }'\n"
	"  vtice probe 'fn:do_filp_open:return { printf(\"%s\\n\", str(retval->f_path.dentry->d_name.name)); }'\n"
	"  vtice probe 'syscall:openat:return /comm == \"bash\"/ { printf(\"%d\\n\", retval); }'\n"
	"  vtice probe 'syscall:nanosleep { @s[tid] = nsecs; }\n"
	"               syscall:nanosleep:return /@s[tid]/ {\n"
	"                 @us = hist((nsecs - @s[tid]) / 1000); delete(@s[tid]); }'\n"
	"  vtice probe 'profile:hz:99 { @[kstack] = count(); }' --duration 10 --folded out.folded\n"
	"  vtice probe 'fn:kmem_cache_alloc { @[kstack] = count(); }' --duration 5\n"
	"  vtice probe 'watch:w:jiffies_64:8 { @[func] = count(); }' --duration 1\n"
	"\n"
	"Probe points: fn:NAME (a kernel function's entry, through a hidden\n"
	"breakpoint), fn:NAME:return (its RETs), addr:NAME+OFFSET or addr:0xADDRESS\n"
	"(an instruction of the kernel's text), watch:w|r|rw:SYMBOL[+OFFSET]:LEN or\n"
	"watch:w:0xADDRESS:LEN (writes, reads or both of kernel memory, through EPT),\n"
	"syscall:NAME, syscall:NAME:return, syscall:*, profile:hz:N\n"
	"(every CPU sampled N times a second), interval:s:N, interval:ms:N, BEGIN,\n"
	"END. Values: pid tid comm cpu nsecs retval probe arg0..arg5, args->NAME (a\n"
	"function's argument by its BTF name, in fn: probes), args->NAME->FIELD and\n"
	"((struct T *)argN)->FIELD, ->FIELD[N] (fields and elements read through an\n"
	"argument by root at a fn: probe's hit, as the BTF lays them out; bitfields\n"
	"too; N a number, or an argument, register or retval: fd[arg0]),\n"
	"((struct T *)reg(\"rdx\"))->FIELD (also at addr:), curtask->FIELD (the\n"
	"running task), retval->FIELD (at fn:NAME:return,\n"
	"through what the function returns), kstack (in fn:,\n"
	"addr:, watch: and profile probes), reg(\"rdi\") (rdi rsi rdx rcx r8 r9 rax rip\n"
	"and more, in fn:, addr: and watch: probes), func (the function a hit is in),\n"
	"addr (the watched byte an access touched, in watch:),\n"
	"@maps. Maps: count() sum() min() max() avg() hist() lhist().\n"
	"Actions: printf, print(@m), clear(@m), delete(@m[k]), exit(). The maps are\n"
	"printed at the end (Ctrl-C, --duration, exit()). docs/probes.md has it all.\n"
	"\n"
	"options:\n"
	"  --file PATH        read the program from PATH ('-' for stdin)\n"
	"  --duration S       stop after S seconds (default: Ctrl-C or exit())\n"
	"  -o, --output FILE  JSON lines to FILE (printf text, maps, a summary)\n"
	"  --folded FILE      the maps keyed by kstack as FlameGraph folded lines\n"
	"  --max-entries N    keys one map may hold (default 65536); updates past it\n"
	"                     are counted and reported, never silently dropped\n"
	"  --check            check the program and say what it would arm; run nothing\n"
	"  --device PATH      the vtice device (default /dev/vtice)\n"
	"  --kallsyms PATH    kernel symbols for fn: and kstack (default /proc/kallsyms)\n"
	"  --kcore PATH       kernel memory for fn: and kstack's ORC tables\n"
	"                     (default /proc/kcore)\n"
	"  --btf PATH         kernel types for args->NAME and fields (default /sys/kernel/btf/vmlinux;\n"
	"                     a vmlinux or raw BTF)\n";

constexpr std::size_t kMaxProgramFile = 1 << 20;	// the language takes 64 KiB; a bigger file is refused by it
// Kernel stack per sample or fn: hit for kstack: as much as the module
// copies. The kernel moves each syscall's frames down by up to 1 KiB
// (randomize_kstack_offset, on in Debian's kernels): with 1 KiB, 2 of the
// 20 vfs_read hits of hv.probe-kstack lost the syscall's entry frame. The
// copy ends at the stack's top anyway.
constexpr std::uint32_t kStackBytes = VTICE_PROFILE_STACK_MAX;
static_assert(probes::kMaxProfileHz == VTICE_PROFILE_HZ_MAX);
static_assert(probes::kMaxSyscallStrings == VTICE_SYSCALL_STRINGS_MAX);

struct Options {
	std::string source;
	std::string source_name = "program";
	double duration = 0;
	std::string output;
	std::string folded;
	std::size_t max_entries = probes::kDefaultMaxMapEntries;
	bool check_only = false;
	std::string device = "/dev/" VTICE_DEVICE_NAME;
	std::string kallsyms = "/proc/kallsyms";
	std::string kcore = "/proc/kcore";
	std::string btf = "/sys/kernel/btf/vmlinux";
};

Result<Options> parse_options(const ParsedArgs &args)
{
	Options o;
	if (auto file = args.get("--file")) {
		if (!args.positional.empty())
			return make_error("give the program as an argument or with --file, not both");
		bool stdin_ = *file == "-";
		auto bytes = read_input(stdin_ ? "/dev/stdin" : *file, kMaxProgramFile);
		if (!bytes)
			return bytes.error();
		o.source.assign(bytes->begin(), bytes->end());
		o.source_name = stdin_ ? "standard input" : *file;
	} else if (args.positional.size() == 1) {
		o.source = args.positional[0];
	} else {
		return make_error("expected one program (quote it), or --file PATH");
	}
	if (auto d = args.get("--duration")) {
		auto seconds = parse_seconds("--duration", *d, 1e7);
		if (!seconds)
			return seconds.error();
		o.duration = *seconds;
	}
	if (auto n = args.get("--max-entries")) {
		auto count = parse_count("--max-entries", *n, 1, 100'000'000);
		if (!count)
			return count.error();
		o.max_entries = *count;
	}
	o.check_only = args.has("--check");
	o.device = args.get("--device").value_or(o.device);
	o.kallsyms = args.get("--kallsyms").value_or(o.kallsyms);
	o.kcore = args.get("--kcore").value_or(o.kcore);
	o.btf = args.get("--btf").value_or(o.btf);
	for (const std::string *input : {&o.device, &o.kallsyms, &o.kcore, &o.btf})
		RunInputs::get().note_path(*input);
	o.output = args.get("--output").value_or("");
	if (!o.output.empty())
		if (auto ok = check_output_path(o.output); !ok)
			return make_error("--output: " + ok.error().message);
	o.folded = args.get("--folded").value_or("");
	if (!o.folded.empty())
		if (auto ok = check_output_path(o.folded); !ok)
			return make_error("--folded: " + ok.error().message);
	if (!o.folded.empty() && o.folded == o.output)
		return make_error("--folded and -o name the same file");
	return o;
}

// What root reads of guest memory at the hits (the fetch programs).
std::string describe_fetch(const probes::CheckedProgram &p)
{
	std::string text;
	for (const auto &probe : p.program.probes) {
		if (probe.fetch.empty())
			continue;
		std::size_t values = 0, strings = 0, tests = 0;
		for (const auto &op : probe.fetch) {
			values += op.code == probes::FetchCode::Value;
			strings += op.code == probes::FetchCode::String;
			tests += op.code == probes::FetchCode::Keep;
		}
		text += "; at " + probe.points[0].text + (probe.points.size() > 1 ? " and the rest of its probe" : "") +
			(tests ? " root tests " + std::to_string(tests) + " of the predicate's comparisons (a hit failing "
				 "one is not recorded) and" : "") +
			" root reads " + std::to_string(values) + " value" + (values == 1 ? "" : "s") +
			(strings ? " and a string" : "") + " (" + std::to_string(probe.fetch.size()) + " fetch ops)";
	}
	return text;
}

std::string describe_program(const probes::CheckedProgram &p)
{
	std::size_t points = 0;
	for (const auto &probe : p.program.probes)
		points += probe.points.size();
	std::string text = std::to_string(p.program.probes.size()) + " probe" +
			   (p.program.probes.size() == 1 ? "" : "s") + ", " + std::to_string(points) + " point" +
			   (points == 1 ? "" : "s") + ", " + std::to_string(p.maps.size()) + " map" +
			   (p.maps.size() == 1 ? "" : "s");
	if (p.profile_hz) {
		TaskFilter sampled{p.profile_filter.comm, p.profile_filter.pid};
		text += "; every CPU sampled " + std::to_string(p.profile_hz) + " times a second" +
			(p.profile_kstack ? ", with its kernel stack" : "") +
			(sampled.comm.empty() && !sampled.pid ? "" : ", recorded for " + describe_filter(sampled) + " only");
	}
	if (!p.has_syscall_probes && !p.has_fn_probes)
		return text + (p.profile_hz ? "" : "; no syscall, fn or profile probes: nothing to arm");
	TaskFilter filter{p.root_filter.comm, p.root_filter.pid};
	std::string what = p.has_syscall_probes && p.has_fn_probes ? "the syscalls and probe hits"
			   : p.has_syscall_probes			  ? "the syscalls"
									  : "the probe hits";
	return text + "; the hypervisor records " + what + " of " + describe_filter(filter) +
	       (p.fn_kstack ? ", each probe hit with its kernel stack" : "") + describe_fetch(p);
}

int fail(const Error &e)
{
	eprintf("vtice probe: %s\n", e.to_string().c_str());
	return kExitFailure;
}

// The device and its rings, for the syscall trap and the function probes,
// which closing the device disarms however the run ends.
class EventSource {
public:
	static Result<EventSource> open(const Options &o)
	{
		auto dev = open_device(o.device, O_RDWR);
		if (!dev)
			return dev.error();
		auto status = request<vtice_status>();
		if (ioctl(dev->get(), VTICE_IOC_STATUS, &status) < 0)
			return ioctl_error(o.device, "VTICE_IOC_STATUS", errno);
		auto rings = map_record_rings(*dev, o.device, status);
		if (!rings)
			return rings.error();
		return EventSource(std::move(*dev), std::move(*rings), o.device);
	}

	void skip_old_records()
	{
		for (auto &r : rings_)
			r->skip();
	}

	Result<vtice_syscalls> arm_syscalls(const probes::RootFilter &filter, const SyscallStrings &strings)
	{
		return syscalls_ioctl(dev_, path_, VTICE_SYSCALLS_ARM, TaskFilter{filter.comm, filter.pid}, strings);
	}

	Result<vtice_syscalls> disarm_syscalls() { return syscalls_ioctl(dev_, path_, VTICE_SYSCALLS_DISARM); }

	// Every online CPU, hz a second, each sample with stack_bytes of its
	// kernel stack; only the samples of the filter's task are recorded.
	Result<vtice_profile> arm_profile(std::uint32_t hz, std::uint32_t stack_bytes, const probes::RootFilter &filter)
	{
		return profile_ioctl(dev_, path_,
				     profile_arm_request(hz, stack_bytes, VTICE_PROFILE_ALL_CPUS,
							 TaskFilter{filter.comm, filter.pid}));
	}

	Result<vtice_profile> disarm_profile()
	{
		auto req = request<vtice_profile>();
		req.op = VTICE_PROFILE_DISARM;
		return profile_ioctl(dev_, path_, req);
	}

	std::vector<std::vector<vtice_record>> drain() { return drain_rings(rings_); }
	// Made on each use: it refers to this object's device, which moves with it.
	FunctionProbes functions() const { return FunctionProbes(dev_, path_); }

private:
	EventSource(DeviceFd dev, std::vector<std::unique_ptr<RecordRing>> rings, std::string path)
		: dev_(std::move(dev)), rings_(std::move(rings)), path_(std::move(path))
	{
	}

	DeviceFd dev_;
	std::vector<std::unique_ptr<RecordRing>> rings_;
	std::string path_;
};

struct RunTotals {
	bool syscalls = false, functions = false, profile = false;	// what was armed
	std::uint64_t seen = 0, recorded = 0;	// SYSCALL/SYSRET the trap executed, and kept
	std::uint32_t probes = 0;		// function probes armed
	std::uint64_t hits = 0;			// their hits the hypervisor recorded
	std::uint64_t samples = 0;		// profile samples the hypervisor recorded
};

void report_summary(const Options &o, const probes::Runtime &rt, const ProbeFeed &feed, const RunTotals &totals,
		    probes::Output &out)
{
	std::string line = std::to_string(feed.stats().events) + " events; probes fired " +
			   std::to_string(rt.stats().fired) + " times; " +
			   std::to_string(feed.decode_stats().lost) + " records lost in the rings";
	if (feed.decode_stats().malformed + feed.sample_stats().malformed)
		line += ", " + std::to_string(feed.decode_stats().malformed + feed.sample_stats().malformed) +
			" malformed groups skipped";
	if (rt.map_updates_refused())
		line += "; " + std::to_string(rt.map_updates_refused()) + " map updates refused (a map held " +
			std::to_string(o.max_entries) + " keys: --max-entries)";
	if (rt.stats().division_by_zero)
		line += "; " + std::to_string(rt.stats().division_by_zero) + " divisions by zero (they gave 0)";
	if (rt.stats().unreadable_reads)
		line += "; " + std::to_string(rt.stats().unreadable_reads) +
			" reads through arguments found their memory unmapped (they gave 0)";
	if (feed.stats().returns_unpaired)
		line += "; " + std::to_string(feed.stats().returns_unpaired) +
			" returns whose entry came before the run (no :return probe fired for them)";
	if (totals.syscalls)
		line += "; the hypervisor executed " + std::to_string(totals.seen) + " SYSCALL/SYSRET, " +
			std::to_string(totals.recorded) + " passed its filter";
	if (totals.functions)
		line += "; " + std::to_string(totals.probes) + " function probes recorded " +
			std::to_string(totals.hits) + " hits";
	if (totals.profile)
		line += "; the hypervisor recorded " + std::to_string(totals.samples) + " samples";
	eprintf("vtice probe: %s\n", line.c_str());
	out.summary("\"events\":" + std::to_string(feed.stats().events) +
		    ",\"fired\":" + std::to_string(rt.stats().fired) +
		    ",\"lost\":" + std::to_string(feed.decode_stats().lost) +
		    ",\"map_updates_refused\":" + std::to_string(rt.map_updates_refused()) +
		    ",\"division_by_zero\":" + std::to_string(rt.stats().division_by_zero) +
		    ",\"unreadable_reads\":" + std::to_string(rt.stats().unreadable_reads) +
		    ",\"returns_unpaired\":" + std::to_string(feed.stats().returns_unpaired) +
		    ",\"trap_seen\":" + std::to_string(totals.seen) + ",\"trap_recorded\":" + std::to_string(totals.recorded) +
		    ",\"fn_probes\":" + std::to_string(totals.probes) + ",\"fn_hits\":" + std::to_string(totals.hits) +
		    ",\"samples\":" + std::to_string(totals.samples));
}

// The syscall trap and the function probes, as the program asks.
Result<void> arm(EventSource &source, const probes::CheckedProgram &program, RunTotals &totals)
{
	source.skip_old_records();
	if (program.has_syscall_probes) {
		auto armed = source.arm_syscalls(program.root_filter, program.syscall_strings);
		if (!armed)
			return armed.error();
		totals.syscalls = true;
		totals.seen = armed->seen;	// the counts run on: the run's are the difference
		totals.recorded = armed->recorded;
		eprintf("vtice probe: syscall trap armed on %u CPUs%s\n", armed->cpus_armed,
			armed->cpus_failed ? (" (" + std::to_string(armed->cpus_failed) + " could not)").c_str() : "");
	}
	if (program.has_fn_probes) {
		auto hits = source.functions().hits_so_far();
		totals.hits = hits ? *hits : 0;
		auto probes = source.functions().arm(program, program.fn_kstack ? kStackBytes : 0);
		if (!probes)
			return probes.error();
		totals.functions = true;
		totals.probes = *probes;
		eprintf("vtice probe: %u probe points armed (hidden breakpoints and watched ranges)\n", *probes);
	}
	if (program.profile_hz) {
		auto armed = source.arm_profile(program.profile_hz, program.profile_kstack ? kStackBytes : 0,
						program.profile_filter);
		if (!armed)
			return armed.error();
		totals.profile = true;
		totals.samples = armed->samples;
		eprintf("vtice probe: sampling %u CPU%s at %u Hz\n", armed->armed, armed->armed == 1 ? "" : "s",
			program.profile_hz);
	}
	return {};
}

Result<void> disarm(EventSource &source, RunTotals &totals)
{
	if (totals.profile) {
		auto disarmed = source.disarm_profile();
		if (!disarmed)
			return disarmed.error();
		totals.samples = disarmed->samples - totals.samples;
	}
	if (totals.functions) {
		auto hits = source.functions().disarm();
		if (!hits)
			return hits.error();
		totals.hits = *hits - totals.hits;
	}
	if (totals.syscalls) {
		auto disarmed = source.disarm_syscalls();
		if (!disarmed)
			return disarmed.error();
		totals.seen = disarmed->seen - totals.seen;
		totals.recorded = disarmed->recorded - totals.recorded;
	}
	return {};
}

constexpr long kPollMs = 20;

// The name of the symbol address is in; "" outside every symbol.
std::string function_name_of(const dbg::SymbolList &symbols, std::uint64_t address)
{
	auto hit = symbols.symbolize(address);
	return hit ? hit->name : std::string();
}

// kstack's text for each sample: the copied stack unwound with the running
// kernel's ORC tables, each frame named from kallsyms, as vtice profile
// does (without ORC tables, the sampled function alone, with a warning).
class KernelStacks {
public:
	static Result<std::unique_ptr<KernelStacks>> load(const Options &o, KernelBtf &btf)
	{
		auto symbols = read_running_kallsyms(o.kallsyms, "entry_SYSCALL_64");
		if (!symbols)
			return symbols.error();
		auto orc = RunningOrc::load(**symbols, o.kcore, btf);
		if (!orc)
			eprintf("vtice probe: warning: %s; each kstack is its sampled function alone\n",
				orc.error().to_string().c_str());
		else
			for (const std::string &w : (*orc)->warnings())
				eprintf("vtice probe: warning: %s\n", w.c_str());
		return std::unique_ptr<KernelStacks>(
			new KernelStacks(std::move(*symbols), orc ? std::move(*orc) : nullptr));
	}

	// Leaf first, a frame a line.
	std::string text(const trace::ProfileSample &s)
	{
		std::vector<std::string> names =
			namer_.names(s, unwind_sample(orc_ ? &orc_->tables() : nullptr, s, kMaxSampleFrames));
		std::string out;
		for (auto n = names.rbegin(); n != names.rend(); ++n)
			out += (out.empty() ? "" : "\n") + *n;
		return out;
	}

	// The function address is in (func), named as the frames are.
	std::string function_of(std::uint64_t address) const { return function_name_of(*symbols_, address); }

	// kallsyms read again (a module came or went): frames are named from
	// these from now on, and unwound with the modules' tables as they are now.
	void use_symbols(std::unique_ptr<dbg::SymbolList> symbols)
	{
		symbols_ = std::move(symbols);
		namer_ = namer_of(symbols_.get());
		if (orc_)
			orc_->reload_modules();
	}

private:
	KernelStacks(std::unique_ptr<dbg::SymbolList> symbols, std::unique_ptr<RunningOrc> orc)
		: symbols_(std::move(symbols)), orc_(std::move(orc)), namer_(namer_of(symbols_.get()))
	{
	}

	static FrameNamer namer_of(const dbg::SymbolList *list)
	{
		return FrameNamer([list](std::uint64_t a) { return list->symbolize(a); });
	}

	std::unique_ptr<dbg::SymbolList> symbols_;
	std::unique_ptr<RunningOrc> orc_;
	FrameNamer namer_;
};

// The maps that --folded takes, into FILE.
Result<void> write_folded(const std::string &path, const probes::CheckedProgram &program,
			  const probes::Runtime &runtime)
{
	auto file = OutputFile::open(path);
	if (!file)
		return file.error();
	std::size_t written = 0;
	for (std::size_t m = 0; m < program.maps.size(); m++)
		if (foldable(program.maps[m])) {
			write_folded_map(file->stream(), program.maps[m], runtime.maps().entries(m));
			written++;
		}
	if (!written)
		eprintf("vtice probe: warning: --folded: no map is keyed by a kstack with a number as its value; "
			"%s is empty\n", path.c_str());
	return file->commit();
}

int run(const Options &o, const probes::CheckedProgram &program, KernelBtf &btf)
{
	std::optional<EventSource> source;
	if (program.has_syscall_probes || program.has_fn_probes || program.profile_hz) {
		auto opened = EventSource::open(o);
		if (!opened)
			return fail(opened.error());
		source.emplace(std::move(*opened));
	}
	std::optional<OutputFile> file;
	if (!o.output.empty()) {
		auto opened = OutputFile::open(o.output);
		if (!opened)
			return fail(opened.error());
		file.emplace(std::move(*opened));
	}
	probes::TextOutput text(stdout);
	std::optional<probes::JsonOutput> json;
	if (file)
		json.emplace(file->stream());
	probes::Output &out = json ? static_cast<probes::Output &>(*json) : text;

	std::unique_ptr<KernelStacks> stacks;
	std::optional<KallsymsRefresh> kallsyms;
	if (program.uses_kstack()) {
		kallsyms.emplace(o.kallsyms);	// the module list, before the symbols are read
		auto loaded = KernelStacks::load(o, btf);
		if (!loaded)
			return fail(loaded.error());
		stacks = std::move(*loaded);
	}
	// func: named from kstack's symbols when it has them, else from its own read of kallsyms.
	std::unique_ptr<dbg::SymbolList> func_symbols;
	ProbeFeed::FunctionName function_name;
	if (program.uses_func && stacks) {
		function_name = [&stacks](std::uint64_t a) { return stacks->function_of(a); };
	} else if (program.uses_func) {
		auto symbols = read_running_kallsyms(o.kallsyms, "_text");
		if (!symbols)
			return fail(symbols.error());
		func_symbols = std::move(*symbols);
		function_name = [&func_symbols](std::uint64_t a) { return function_name_of(*func_symbols, a); };
	}
	TscClock clock;
	probes::Runtime runtime(program, out, o.max_entries);
	ProbeFeed::StackText stack_text;
	if (stacks)
		stack_text = [&stacks](const trace::ProfileSample &s) { return stacks->text(s); };
	ProbeFeed feed(runtime, [&clock](std::uint64_t tsc) { return clock.to_ns(tsc); }, stack_text, function_name);
	catch_stop_signals();
	RunTotals totals;
	if (source) {
		if (auto armed = arm(*source, program, totals); !armed) {
			(void)disarm(*source, totals);	// what did arm; the error to report is arm's
			return fail(armed.error());
		}
	}
	eprintf("vtice probe: %s: %s; %s\n", source ? "armed" : "running", describe_program(program).c_str(),
		o.duration ? "until the duration ends" : "Ctrl-C stops");
	std::uint64_t start = TscClock::now_ns();
	runtime.begin(start);
	while (!stop_requested() && !runtime.exited()) {
		if (o.duration && TscClock::now_ns() - start >= static_cast<std::uint64_t>(o.duration * 1e9))
			break;
		sleep_ms(kPollMs);
		if (source)
			feed.feed(source->drain());
		if (stacks)
			if (auto fresh = kallsyms->poll(TscClock::now_ns())) {
				stacks->use_symbols(std::move(fresh));
				eprintf("vtice probe: a module came or went: %s read again\n", o.kallsyms.c_str());
			}
		runtime.tick(TscClock::now_ns());
		std::fflush(stdout);
	}
	if (source) {
		auto disarmed = disarm(*source, totals);
		feed.feed(source->drain());
		if (!disarmed)
			return fail(disarmed.error());
	}
	runtime.finish(TscClock::now_ns());
	report_summary(o, runtime, feed, totals, out);
	std::fflush(stdout);
	if (!o.folded.empty())
		if (auto written = write_folded(o.folded, program, runtime); !written)
			return fail(written.error());
	if (file)
		if (auto written = file->commit(); !written)
			return fail(written.error());
	return kExitOk;
}

}  // namespace

int cmd_probe(int argc, char **argv)
{
	std::vector<char *> expanded = expand_output_option(argc, argv);
	auto args = parse_args(static_cast<int>(expanded.size()), expanded.data(),
			       {{"--file", true}, {"--duration", true}, {"--output", true}, {"--folded", true},
				{"--max-entries", true},
				{"--check", false}, {"--device", true}, {"--kallsyms", true}, {"--kcore", true},
				{"--btf", true}});
	if (!args) {
		eprintf("vtice probe: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	auto opts = parse_options(*args);
	if (!opts) {
		eprintf("vtice probe: %s (vtice probe --help)\n", opts.error().to_string().c_str());
		return kExitUsage;
	}
	auto btf = std::make_shared<KernelBtf>(opts->btf);	// args->NAME, fields and kstack's module frames
	auto types = kernel_types(btf);
	auto program = probes::compile_program(
		opts->source, [](std::string_view name) { return trace::syscall_number(name); }, kernel_params(btf),
		types.get());
	if (!program) {
		eprintf("%s", probes::format_diagnostic(opts->source, program.error(), opts->source_name).c_str());
		return kExitUsage;
	}
	if (opts->check_only) {
		std::printf("%s: OK: %s\n", opts->source_name.c_str(), describe_program(*program).c_str());
		return kExitOk;
	}
	auto found = resolve_function_points(*program, opts->kallsyms, opts->kcore);
	if (!found) {
		if (found.error().offset)	// about one probe point: show it
			eprintf("%s", probes::format_diagnostic(opts->source, found.error(), opts->source_name).c_str());
		else
			eprintf("vtice probe: %s\n", found.error().to_string().c_str());
		return kExitFailure;
	}
	for (const std::string &note : *found)
		eprintf("vtice probe: note: %s\n", note.c_str());
	return exit_status(run(*opts, *program, *btf));
}

}  // namespace vtice::console
