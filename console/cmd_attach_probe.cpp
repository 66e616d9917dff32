// `probe` in vtice attach: vtice probe's programs on the machine a vtice
// debug stub serves, armed and drained through the stub (probe_stub_source.hpp).
#include "cmd_attach_probe.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "attach_session.hpp"
#include "diagnostic.hpp"
#include "kallsyms_modules.hpp"
#include "messages.hpp"
#include "probe_functions.hpp"
#include "probe_list.hpp"
#include "probe_params.hpp"
#include "probe_stub_source.hpp"
#include "profile_report.hpp"
#include "stub_module_btf.hpp"
#include "stub_modules.hpp"
#include "stub_stacks.hpp"
#include "subcommands.hpp"
#include "syscall_events.hpp"
#include "syscall_params.hpp"
#include "vtice/interrupts.hpp"

namespace vtice::console {
namespace {

// How long the machine runs between two drains of its rings, at most and
// at least (a profile's samples fill them faster: drain_ms_for).
constexpr long kDrainMs = 1000;
constexpr long kMinDrainMs = 50;
// The module's default ring (its ring_records parameter), and the records
// of a profile sample without its stack (head, REGS, TASK, COMM).
constexpr std::uint64_t kDefaultRingRecords = 4096;
constexpr std::uint64_t kSampleRecords = 4;
// What the end of a run takes at most (disarm, the last drain), kept
// within the command's --timeout.
constexpr double kDisarmSeconds = 5;

const char kProbeHelp[] =
	"Runs a vtice probe program on the machine the vtice hypervisor's stub serves\n"
	"(the same language as `vtice probe`, docs/probes.md): the stub arms the\n"
	"probes from VMX root, the machine runs, and every second the console breaks\n"
	"in, takes each CPU's records and lets it run on. The maps are printed when\n"
	"the run ends (Ctrl-C, --duration, exit(), or the command's --timeout in\n"
	"batch mode); the machine is then stopped, with the probes removed.\n"
	"Probe points: fn:NAME, fn:NAME:return, fn:MODULE:NAME[:return], addr:, watch:,\n"
	"syscall:NAME, syscall:NAME:return, profile:hz:N (a profile with kstack is drained more\n"
	"often, and each sample carries 2 KiB of stack over the line).\n"
	"Symbols and text come from this session (--symbols), types from its BTF\n"
	"(--btf, the image's .BTF, or the kernel's memory), and kstack is unwound\n"
	"with its ORC tables (the kernel's, and each module's read from its memory).\n"
	"  probe 'fn:vfs_read { @[comm] = count(); }' --duration 10\n"
	"  probe 'syscall:openat /comm == \"cat\"/ { printf(\"%s\\n\", str(args->filename)); }'\n"
	"  probe 'fn:do_sys_openat2 /comm == \"cat\"/ { printf(\"%s\\n\", str(args->filename)); }'\n"
	"  probe 'fn:vfs_fsync { @[kstack] = count(); }' --folded fsync.folded\n"
	"  probe 'profile:hz:99 /comm == \"dd\"/ { @[kstack] = count(); }' --folded dd.folded\n"
	"Options: --duration S, -o FILE (JSON lines), --folded FILE (kstack maps for\n"
	"FlameGraph), --max-entries N, --check, --file PATH, --list (the argument is\n"
	"probe points: what args-> names at each, read through this session).";

// The command's words as vtice probe's argv.
Result<ProbeOptions> parse(const std::vector<std::string> &args)
{
	std::vector<std::string> words = {"probe"};
	words.insert(words.end(), args.begin(), args.end());
	std::vector<char *> argv;
	for (std::string &w : words)
		argv.push_back(w.data());
	std::vector<char *> expanded = expand_output_option(static_cast<int>(argv.size()), argv.data());
	auto parsed = parse_args(static_cast<int>(expanded.size()), expanded.data(), kProbeOptionSpecs);
	if (!parsed)
		return parsed.error();
	if (parsed->help)
		return make_error("see 'help probe'");
	for (const char *local : {"--device", "--kallsyms", "--kcore"})
		if (parsed->has(local))
			return make_error(std::string(local) + " is vtice probe's on the traced machine; here the symbols and "
							       "memory are the session's");
	auto o = parse_probe_options(*parsed);
	if (o && !parsed->has("--btf"))
		o->btf.clear();	// the session's types, not this machine's
	return o;
}

// What the stub cannot do, said before anything is armed.
Result<void> check_stub_can_run(const probes::CheckedProgram &program)
{
	if (!program.has_fn_probes && !program.has_syscall_probes && !program.profile_hz)
		return make_error("the program has no fn:, addr:, watch:, syscall: or profile: probe: nothing to arm "
				  "through the stub");
	return {};
}

// Half the time a profile's samples take to fill a CPU's ring of the
// module's default size: a sample with kstack is 132 records, and 31 of
// them fill 4,096, a third of a second at 99 Hz.
long drain_ms_for(const probes::CheckedProgram &program)
{
	if (!program.profile_hz)
		return kDrainMs;
	std::uint64_t per_sample = kSampleRecords + (program.profile_kstack ? kKstackBytes / 16 : 0);
	std::uint64_t fill_ms = 1000 * kDefaultRingRecords / (program.profile_hz * per_sample);
	return std::clamp(static_cast<long>(fill_ms / 2), kMinDrainMs, kDrainMs);
}

// Whether the point names, or is at, what the session's symbols lack:
// then it reads the module's symbols that might have it.
bool reads_module_symbols(StubModules &modules, const dbg::SymbolList &symbols, const probes::ProbePoint &point)
{
	if (!probes::is_probe_hit_point(point))
		return false;
	if (!point.module.empty() && point.module != probes::kVmlinux) {
		(void)modules.lookup_in(point.module, point.function);	// an error comes when the point is resolved
		return true;
	}
	if (!point.function.empty()) {
		if (symbols.lookup(point.function))
			return false;
		modules.lookup(point.function);
		return true;
	}
	if (symbols.symbolize(point.address))
		return false;
	return modules.symbolize(point.address).has_value();
}

// The session's symbols and, when a probe's function or symbol is not
// among them or its address in none, the loaded modules' (read through
// the stub: a module's function, code or data is probed as the kernel's
// are); null when the session's alone will do.
std::unique_ptr<dbg::SymbolList> with_module_symbols(dbg::Session &session, const dbg::SymbolList &symbols,
						     const probes::CheckedProgram &program)
{
	auto *modules = dynamic_cast<StubModules *>(session.modules().get());
	bool missing = false;
	for (const auto &probe : program.program.probes)
		for (const auto &point : probe.points)
			if (modules && reads_module_symbols(*modules, symbols, point))
				missing = true;
	if (!missing)
		return nullptr;
	return symbols.with(modules->symbols_read(), symbols.origin() + " and the loaded modules' symbols");
}

// Resolves the program's points with the session's symbols (and the
// modules', for their functions) and the kernel's live text read through
// the stub.
Result<std::vector<std::string>> resolve_points(dbg::Session &session, probes::CheckedProgram &program)
{
	const auto *symbols = dynamic_cast<const dbg::SymbolList *>(session.symbols());
	if (!symbols)
		return make_error("probe needs the kernel's symbol table: attach with --symbols vmlinux (or System.map)");
	const dbg::SymbolList *kernel_symbols = symbols;
	auto with_modules = with_module_symbols(session, *symbols, program);
	if (with_modules)
		symbols = with_modules.get();
	auto *modules = dynamic_cast<StubModules *>(session.modules().get());
	auto in_module = [&](std::string_view module, std::string_view function) -> Result<std::uint64_t> {
		if (module == probes::kVmlinux) {
			auto address = kernel_symbols->lookup(function);
			if (!address || !*address)
				return make_error("no function " + std::string(function) + " in the kernel's symbols (" +
						  kernel_symbols->origin() + ")");
			return *address;
		}
		if (!modules)
			return make_error("the loaded modules cannot be read through this session");
		return modules->lookup_in(module, function);
	};
	return resolve_function_points(
		program, *symbols, symbols->origin(),
		[&session](std::uint64_t address, std::size_t length) { return session.read_memory(address, length); },
		in_module);
}

// The functions patterns match (a program's and --list's), as the local kallsyms names them:
// the kernel's in this session's symbols, and the loaded modules' as
// MODULE:NAME from their symbols in the kernel's memory (read through the
// stub once, with a progress line): every module's, or with a module
// pattern (fn:msr:*) only the matching modules' and not the kernel's.
// Without the modules, the kernel's, and a note why.
Result<std::vector<std::string>> function_names(dbg::Session &session, dbg::Output &out,
						 std::string_view module_pattern)
{
	const auto *list = dynamic_cast<const dbg::SymbolList *>(session.symbols());
	if (!list)
		return make_error("this session has no symbol table to match patterns against");
	InitText init{list->lookup("_sinittext").value_or(0), list->lookup("_einittext").value_or(0)};
	std::set<std::string> names;
	if (module_pattern.empty())
		for (const auto &e : list->entries())
			if ((e.type == 't' || e.type == 'T') && is_c_identifier(e.name) && !init.holds(e.address))
				names.insert(e.name);
	if (auto *modules = dynamic_cast<StubModules *>(session.modules().get())) {
		auto listed = modules->function_names([module_pattern](std::string_view module) {
			return module_pattern.empty() || matches_pattern(module_pattern, module);
		});
		if (listed)
			names.insert(listed->begin(), listed->end());
		else
			out.print("the patterns match the kernel's functions only: %s\n", listed.error().message.c_str());
	}
	return std::vector<std::string>(names.begin(), names.end());
}

void report(const Error &e, const ProbeOptions &o)
{
	if (e.offset)
		eprintf("%s", probes::format_diagnostic(o.source, e, o.source_name).c_str());
}

Result<void> run_probe(dbg::CommandContext &ctx, const std::vector<std::string> &args)
{
	if (!dynamic_cast<StdOutput *>(&ctx.out))
		return make_error("probe prints as it runs: use it at vtice attach's prompt or in --batch, not the screen");
	auto o = parse(args);
	if (!o)
		return o.error();
	dbg::Session &session = ctx.session;
	if (!o->check_only && !o->list_only && !session.target().features().probes)
		return make_error(session.target().describe() + " arms no probes: probe needs the vtice hypervisor's stub");
	auto btf = !o->btf.empty() ? std::make_shared<KernelBtf>(o->btf)
				   : std::make_shared<KernelBtf>(KernelBtf::Borrow([&session, &ctx] {
					     return session.kernel_types().get(session, ctx.out);
				     }));
	// args->NAME of a module's function: the module's BTF the kernel keeps.
	auto *modules = dynamic_cast<StubModules *>(session.modules().get());
	auto probe_types = std::make_shared<ProbeTypes>(
		btf, modules ? stub_module_types(
				       session,
				       [modules](std::string_view f, std::string_view m) {
					       return modules->module_of_function(f, m);
				       },
				       ctx.out)
			     : ModuleTypesLookup{});
	// args->NAME of a syscall: the kernel's declarations, read through the session.
	auto declared = syscall_params(btf, [&session]() -> Result<KernelMemory> {
		const dbg::SymbolSource *symbols = session.symbols();
		if (!symbols)
			return make_error("no kernel symbols in this session to find the syscalls' declarations by");
		return KernelMemory{[symbols](std::string_view name) { return symbols->lookup(name); },
				    session.memory_reader()};
	});
	auto functions = [&](std::string_view module) { return function_names(session, ctx.out, module); };
	if (o->list_only) {
		auto points = expand_point_patterns(o->source, functions);
		if (!points)
			return points.error();
		auto listed = list_point_args(
			*points, [](std::string_view name) { return trace::syscall_number(name); },
			kernel_params(probe_types), declared,
			[&ctx](std::size_t i, std::size_t n, std::string_view point) {
				if (n > 1)
					ctx.out.progress("reading the points' arguments: " + std::string(point) + " (" +
							 std::to_string(i) + " of " + std::to_string(n) + ")");
				return !interrupts::command_interrupted();
			});
		if (!listed)
			return listed.error();
		ctx.out.print("%s", listed->text.c_str());
		if (listed->listed < listed->points)
			return make_error("interrupted (Ctrl-C): " + std::to_string(listed->listed) + " of " +
					  std::to_string(listed->points) + " points listed (above)");
		if (!listed->complete)
			return make_error("some points' arguments could not be found (above)");
		return {};
	}
	auto program = compile_typed_program(o->source, probe_types, declared, functions);
	if (!program) {
		report(program.error(), *o);
		return make_error("the program was refused");
	}
	if (o->check_only) {
		ctx.out.print("%s: OK: %s\n", o->source_name.c_str(), describe_program(*program).c_str());
		return {};
	}
	if (auto ok = check_stub_can_run(*program); !ok)
		return ok;
	if (session.state() != dbg::SessionState::Stopped)
		return make_error("the target is not stopped");
	if (program->has_fn_probes) {
		auto notes = resolve_points(session, *program);
		if (!notes) {
			report(notes.error(), *o);
			return notes.error();
		}
		for (const std::string &note : *notes)
			eprintf("vtice probe: note: %s\n", note.c_str());
	}
	// The run ends itself within the command's deadline; its waits have none.
	if (ctx.run_timeout_ms > 0) {
		double budget = std::max(1.0, ctx.run_timeout_ms / 1000.0 - kDisarmSeconds);
		o->duration = o->duration ? std::min(o->duration, budget) : budget;
	}
	interrupts::begin_command(-1);
	StubProbeSource source(session, drain_ms_for(*program));
	RecordNaming naming;
	naming.to_ns = [&source](std::uint64_t tsc) { return source.to_ns(tsc); };
	if (program->uses_func)
		naming.function_name = [&session](std::uint64_t a) {
			auto hit = session.symbols()->symbolize(a);
			return hit ? hit->name : std::string();
		};
	std::optional<StubStacks> stacks;
	if (program->uses_kstack()) {
		stacks.emplace(session);
		naming.stack_text = [&stacks](const trace::ProfileSample &s) { return stacks->text(s); };
	}
	if (run_probe_program(*o, *program, &source, naming) != kExitOk)
		return make_error("the probe run failed");
	session.invalidate_registers();	// the machine ran behind the session's back
	return {};
}

}  // namespace

const dbg::Command kCmdProbe = {
	"probe", {}, "probe 'PROGRAM' [--duration S] [-o FILE] [--max-entries N] [--check] | probe --list 'POINTS'",
	"run a vtice probe program through the stub", kProbeHelp, run_probe};

}  // namespace vtice::console
