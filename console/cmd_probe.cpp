// vtice probe 'PROGRAM': bpftrace-style probes run from under the kernel
// (docs/probes.md). This version fires on the hypervisor's syscall events
// (VTICE_IOC_SYSCALLS), its hidden function breakpoints and its profile
// samples (VTICE_IOC_PROFILE), all through the per-CPU rings, and runs the
// program in the console (probe_run.cpp); the kernel sees no kprobe,
// tracepoint, perf event or changed byte. `probe` in vtice attach runs the
// same programs through a debug stub (cmd_attach_probe.cpp).
#include <fcntl.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "checker.hpp"
#include "device.hpp"
#include "diagnostic.hpp"
#include "kallsyms_modules.hpp"
#include "kallsyms_refresh.hpp"
#include "local_kernel_memory.hpp"
#include "messages.hpp"
#include "probe_feed.hpp"
#include "probe_functions.hpp"
#include "probe_list.hpp"
#include "probe_params.hpp"
#include "probe_run.hpp"
#include "profile_ioctl.hpp"
#include "profile_report.hpp"
#include "profile_stacks.hpp"
#include "record_rings.hpp"
#include "subcommands.hpp"
#include "syscall_events.hpp"
#include "syscall_params.hpp"
#include "trace_common.hpp"
#include "tsc_clock.hpp"

namespace vtice::console {
namespace {

const char kHelp[] =
	"usage: vtice probe 'PROGRAM' [--duration S] [-o FILE] [--folded FILE]\n"
	"                             [--max-entries N] [--check] [--device PATH]\n"
	"                             [--kallsyms PATH] [--kcore PATH] [--btf PATH]\n"
	"       vtice probe --file PATH ...\n"
	"       vtice probe --list 'POINT[, POINT...]' [--kallsyms PATH] [--kcore PATH] [--btf PATH]\n"
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
	"  vtice probe 'syscall:openat { printf(\"%d %s\\n\", args->dfd, str(args->filename)); }'\n"
	"  vtice probe 'syscall:nanosleep { @s[tid] = nsecs; }\n"
	"               syscall:nanosleep:return /@s[tid]/ {\n"
	"                 @us = hist((nsecs - @s[tid]) / 1000); delete(@s[tid]); }'\n"
	"  vtice probe 'profile:hz:99 { @[kstack] = count(); }' --duration 10 --folded out.folded\n"
	"  vtice probe 'fn:kmem_cache_alloc { @[kstack] = count(); }' --duration 5\n"
	"  vtice probe 'fn:vfs_r* { @[func] = count(); }' --duration 5\n"
	"  vtice probe 'watch:w:jiffies_64:8 { @[func] = count(); }' --duration 1\n"
	"\n"
	"Probe points: fn:NAME (a kernel function's entry, through a hidden\n"
	"breakpoint), fn:NAME:return (its RETs), fn:MODULE:NAME[:return] (module\n"
	"MODULE's NAME, where the kernel or another module has one too; vmlinux: the\n"
	"kernel's), addr:NAME+OFFSET or addr:0xADDRESS\n"
	"(an instruction of the kernel's text), watch:w|r|rw:SYMBOL[+OFFSET]:LEN or\n"
	"watch:w:0xADDRESS:LEN (writes, reads or both of kernel memory, through EPT),\n"
	"syscall:NAME, syscall:NAME:return, syscall:*, profile:hz:N\n"
	"(every CPU sampled N times a second), interval:s:N, interval:ms:N, BEGIN,\n"
	"END. A fn: or syscall: name may be a shell pattern (fn:vfs_r*, fn:[kv]free,\n"
	"fn:*_open:return, syscall:pread*): the functions in kallsyms or the syscalls\n"
	"it matches, at most 64 a probe. Values: pid tid comm cpu nsecs retval probe arg0..arg5, args->NAME (a\n"
	"function's argument by its BTF name, in fn: probes; a syscall's by the\n"
	"kernel's declaration, in syscall:NAME probes), args->NAME->FIELD and\n"
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
	"printed at the end (Ctrl-C, --duration, exit()). From another machine, the\n"
	"fn:, addr:, watch:, syscall: and profile: probes run through the hypervisor's\n"
	"debug stub: `probe 'PROGRAM'` at vtice attach's prompt. docs/probes.md has it all.\n"
	"\n"
	"options:\n"
	"  --file PATH        read the program from PATH ('-' for stdin)\n"
	"  --duration S       stop after S seconds (default: Ctrl-C or exit())\n"
	"  -o, --output FILE  JSON lines to FILE (printf text, maps, a summary)\n"
	"  --folded FILE      the maps keyed by kstack as FlameGraph folded lines\n"
	"  --max-entries N    keys one map may hold (default 65536); updates past it\n"
	"                     are counted and reported, never silently dropped\n"
	"  --check            check the program and say what it would arm; run nothing\n"
	"  --list             the argument is probe points ('fn:vfs_read, syscall:openat', or\n"
	"                     patterns: 'fn:vfs_*'): list the arguments args-> names at each,\n"
	"                     and their registers\n"
	"  --device PATH      the vtice device (default /dev/vtice)\n"
	"  --kallsyms PATH    kernel symbols for fn: and kstack (default /proc/kallsyms)\n"
	"  --kcore PATH       kernel memory for fn:, kstack's ORC tables and syscalls'\n"
	"                     declarations (args-> in syscall: probes)\n"
	"                     (default /proc/kcore)\n"
	"  --btf PATH         kernel types for args->NAME and fields (default /sys/kernel/btf/vmlinux;\n"
	"                     a vmlinux or raw BTF); a module's function's are the file named\n"
	"                     after the module beside it (/sys/kernel/btf/msr), found through --kallsyms\n";

static_assert(probes::kMaxProfileHz == VTICE_PROFILE_HZ_MAX);
static_assert(probes::kMaxSyscallStrings == VTICE_SYSCALL_STRINGS_MAX);

// The device and its rings, for the syscall trap and the function probes,
// which closing the device disarms however the run ends.
class LocalSource final : public ProbeSource {
public:
	static Result<std::unique_ptr<LocalSource>> open(const ProbeOptions &o)
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
		return std::unique_ptr<LocalSource>(new LocalSource(std::move(*dev), std::move(*rings), o.device));
	}

	// The syscall trap, the function probes and the profiler, as the program asks.
	Result<void> arm(const probes::CheckedProgram &program, RunTotals &totals) override
	{
		for (auto &r : rings_)
			r->skip();
		if (program.has_syscall_probes)
			if (auto ok = arm_syscalls(program, totals); !ok)
				return ok;
		if (program.has_fn_probes) {
			auto before = functions().query();	// the counts since load, to subtract
			totals.hits = before ? before->hits : 0;
			totals.passed_over = before ? before->passed_over : 0;
			auto req = arm_request(program, program.fn_kstack ? kKstackBytes : 0);
			if (!req)
				return req.error();
			auto probes = functions().arm(*req);
			if (!probes)
				return probes.error();
			totals.functions = true;
			totals.probes = *probes;
			counts_ = RootCountTable(program, *req);
			counting_ = !counts_.empty();
			armed_ = *probes;
			nothing_else_ = only_probe_hits(program);
			eprintf("vtice probe: %u probe points armed (hidden breakpoints and watched ranges)\n", *probes);
		}
		if (program.profile_hz)
			return arm_profile(program, totals);
		return {};
	}

	Result<void> disarm(RunTotals &totals) override
	{
		if (totals.profile) {
			auto req = request<vtice_profile>();
			req.op = VTICE_PROFILE_DISARM;
			auto disarmed = profile_ioctl(dev_, path_, req);
			if (!disarmed)
				return disarmed.error();
			totals.samples = disarmed->samples - totals.samples;
		}
		if (totals.functions) {
			auto disarmed = functions().disarm();
			if (!disarmed)
				return disarmed.error();
			totals.hits = disarmed->hits - totals.hits;
			totals.passed_over = disarmed->passed_over - totals.passed_over;
			totals.root_unreadable = disarmed->unreadable;	// since ARM
			// The probes are gone and root's tables stay until the next ARM:
			// read after the last hit, they hold every one.
			if (auto read = read_root_counts(); !read)
				return read;
			counting_ = false;
		}
		if (totals.syscalls) {
			auto disarmed = syscalls_ioctl(dev_, path_, VTICE_SYSCALLS_DISARM);
			if (!disarmed)
				return disarmed.error();
			totals.seen = disarmed->seen - totals.seen;
			totals.recorded = disarmed->recorded - totals.recorded;
		}
		return {};
	}

	Result<std::vector<std::vector<vtice_record>>> drain() override
	{
		if (counting_)
			if (auto read = read_root_counts(); !read)
				return read.error();
		return drain_rings(rings_);
	}

	RootCounts root_counts() const override { return counts_.totals(); }
	long poll_ms() const override { return 20; }
	bool stop_requested() const override { return console::stop_requested() || ended_; }
	Result<void> after_drain() override
	{
		if (after_drain_)
			after_drain_();
		check_still_armed();
		return {};
	}
	void set_after_drain(std::function<void()> fn) { after_drain_ = std::move(fn); }

private:
	LocalSource(DeviceFd dev, std::vector<std::unique_ptr<RecordRing>> rings, std::string path)
		: dev_(std::move(dev)), rings_(std::move(rings)), path_(std::move(path))
	{
	}

	FunctionProbes functions() const { return FunctionProbes(dev_, path_); }

	// The module removes every probe before a module that holds one goes
	// (docs/probes.md, "A module's function"): said once a second at most,
	// and a run that has nothing else armed ends, its maps printed.
	void check_still_armed()
	{
		std::uint64_t now = TscClock::now_ns();
		if (!armed_ || now - last_check_ns_ < 1'000'000'000)
			return;
		last_check_ns_ = now;
		auto answer = functions().query();
		if (!answer || answer->armed >= armed_)
			return;
		eprintf("vtice probe: %u of %u probe points were removed under the run (a module that held one "
			"went; the kernel log says which)%s\n",
			armed_ - answer->armed, armed_, answer->armed || !nothing_else_ ? "" : ": nothing is armed, the run ends");
		armed_ = answer->armed;
		ended_ = !armed_ && nothing_else_;
	}

	// A QUERY's or DISARM's counts of the addresses armed (running totals).
	void keep_counts(const vtice_probes &answer)
	{
		counts_.update(std::vector<std::uint64_t>(answer.counted, answer.counted + VTICE_PROBES_MAX),
			       std::vector<std::uint64_t>(answer.summed, answer.summed + VTICE_PROBES_MAX));
	}

	// The running totals, and the buckets and key slots of the addresses
	// whose probe counts a hist(), or a count() by key, in root.
	Result<void> read_root_counts()
	{
		if (auto now = functions().query())
			keep_counts(*now);
		return counts_.read_tables([this](std::uint32_t index) { return functions().hist(index); },
					   [this](std::uint32_t index) { return functions().keys(index); });
	}

	Result<void> arm_syscalls(const probes::CheckedProgram &program, RunTotals &totals)
	{
		auto armed = syscalls_ioctl(dev_, path_, VTICE_SYSCALLS_ARM,
					    TaskFilter{program.root_filter.comm, program.root_filter.pid},
					    program.syscall_strings, program.syscall_numbers);
		if (!armed)
			return armed.error();
		totals.syscalls = true;
		totals.seen = armed->seen;	// the counts run on: the run's are the difference
		totals.recorded = armed->recorded;
		eprintf("vtice probe: syscall trap armed on %u CPUs%s\n", armed->cpus_armed,
			armed->cpus_failed ? (" (" + std::to_string(armed->cpus_failed) + " could not)").c_str() : "");
		return {};
	}

	// Every online CPU, hz a second, each sample with its kernel stack if
	// kstack asks; only the samples of the filter's task are recorded.
	Result<void> arm_profile(const probes::CheckedProgram &program, RunTotals &totals)
	{
		auto armed = profile_ioctl(dev_, path_,
					   profile_arm_request(program.profile_hz, program.profile_kstack ? kKstackBytes : 0,
							       VTICE_PROFILE_ALL_CPUS,
							       TaskFilter{program.profile_filter.comm,
									  program.profile_filter.pid}));
		if (!armed)
			return armed.error();
		totals.profile = true;
		totals.samples = armed->samples;
		eprintf("vtice probe: sampling %u CPU%s at %u Hz\n", armed->armed, armed->armed == 1 ? "" : "s",
			program.profile_hz);
		return {};
	}

	DeviceFd dev_;
	std::vector<std::unique_ptr<RecordRing>> rings_;
	std::string path_;
	std::function<void()> after_drain_;
	std::uint32_t armed_ = 0;	// probe points the module has armed, as last asked
	bool nothing_else_ = false;	// no syscall, profile or interval probe beside them
	bool ended_ = false;
	std::uint64_t last_check_ns_ = 0;
	RootCountTable counts_;		// what root counted, as last asked
	bool counting_ = false;		// armed, with addresses that count
};


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
	static Result<std::unique_ptr<KernelStacks>> load(const ProbeOptions &o, KernelBtf &btf)
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
		return kstack_text(namer_, orc_ ? &orc_->tables() : nullptr, s);
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

int fail(const Error &e)
{
	eprintf("vtice probe: %s\n", e.to_string().c_str());
	return kExitFailure;
}

// On this machine: the device's rings; kstack unwound with the running
// kernel's ORC tables and func named from its kallsyms.
int run_local(const ProbeOptions &o, const probes::CheckedProgram &program, KernelBtf &btf)
{
	std::unique_ptr<LocalSource> source;
	if (program.has_syscall_probes || program.has_fn_probes || program.profile_hz) {
		auto opened = LocalSource::open(o);
		if (!opened)
			return fail(opened.error());
		source = std::move(*opened);
	}
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
	RecordNaming naming;
	if (program.uses_func && stacks) {
		naming.function_name = [&stacks](std::uint64_t a) { return stacks->function_of(a); };
	} else if (program.uses_func) {
		auto symbols = read_running_kallsyms(o.kallsyms, "_text");
		if (!symbols)
			return fail(symbols.error());
		func_symbols = std::move(*symbols);
		naming.function_name = [&func_symbols](std::uint64_t a) { return function_name_of(*func_symbols, a); };
	}
	if (stacks) {
		naming.stack_text = [&stacks](const trace::ProfileSample &s) { return stacks->text(s); };
		if (source)
			source->set_after_drain([&] {
				if (auto fresh = kallsyms->poll(TscClock::now_ns())) {
					stacks->use_symbols(std::move(fresh));
					eprintf("vtice probe: a module came or went: %s read again\n", o.kallsyms.c_str());
				}
			});
	}
	TscClock clock;
	naming.to_ns = [&clock](std::uint64_t tsc) { return clock.to_ns(tsc); };
	catch_stop_signals();
	return run_probe_program(o, program, source.get(), naming);
}

// The functions patterns match: kallsyms's, the modules' as MODULE:NAME
// (all of them, whichever modules are asked for: one read of a local file).
FunctionNames kallsyms_functions(const std::string &kallsyms)
{
	return [kallsyms](std::string_view) -> Result<std::vector<std::string>> {
		auto text = read_kallsyms_text(kallsyms);
		if (!text)
			return text.error();
		return text_function_names(*text);
	};
}

int list_points(const ProbeOptions &o, const std::shared_ptr<ProbeTypes> &types,
		const probes::SyscallParamLookup &declared)
{
	auto points = expand_point_patterns(o.source, kallsyms_functions(o.kallsyms));
	if (!points) {
		eprintf("vtice probe: %s\n", points.error().to_string().c_str());
		return kExitUsage;
	}
	auto listed = list_point_args(
		*points, [](std::string_view name) { return trace::syscall_number(name); }, kernel_params(types),
		declared);
	if (!listed) {
		eprintf("vtice probe: %s\n", listed.error().to_string().c_str());
		return kExitUsage;
	}
	std::fputs(listed->text.c_str(), stdout);
	return listed->complete ? kExitOk : kExitFailure;
}

}  // namespace

int cmd_probe(int argc, char **argv)
{
	std::vector<char *> expanded = expand_output_option(argc, argv);
	auto args = parse_args(static_cast<int>(expanded.size()), expanded.data(), kProbeOptionSpecs);
	if (!args) {
		eprintf("vtice probe: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	auto opts = parse_probe_options(*args);
	if (!opts) {
		eprintf("vtice probe: %s (vtice probe --help)\n", opts.error().to_string().c_str());
		return kExitUsage;
	}
	auto btf = std::make_shared<KernelBtf>(opts->btf);	// args->NAME, fields and kstack's module frames
	// args->NAME of a module's function: the module's BTF beside the kernel's.
	auto probe_types = std::make_shared<ProbeTypes>(btf, local_module_types(opts->kallsyms, opts->btf));
	// args->NAME of a syscall: the kernel's declarations, in its memory.
	auto declared = syscall_params(btf, local_kernel_memory(opts->kallsyms, opts->kcore));
	if (opts->list_only)
		return list_points(*opts, probe_types, declared);
	auto program = compile_typed_program(opts->source, probe_types, declared, kallsyms_functions(opts->kallsyms));
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
	return exit_status(run_local(*opts, *program, *btf));
}

}  // namespace vtice::console
