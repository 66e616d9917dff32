// `probe` in vtice attach: vtice probe's programs on the machine a vtice
// debug stub serves, armed and drained through the stub (probe_stub_source.hpp).
#include "cmd_attach_probe.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "attach_session.hpp"
#include "diagnostic.hpp"
#include "messages.hpp"
#include "orc_unwinder.hpp"
#include "probe_functions.hpp"
#include "probe_params.hpp"
#include "probe_stub_source.hpp"
#include "profile_report.hpp"
#include "subcommands.hpp"
#include "syscall_events.hpp"
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
	"Probe points: fn:NAME, fn:NAME:return, addr:, watch:, syscall:NAME,\n"
	"syscall:NAME:return, profile:hz:N (a profile with kstack is drained more\n"
	"often, and each sample carries 2 KiB of stack over the line).\n"
	"Symbols and text come from this session (--symbols), types from its BTF\n"
	"(--btf, the image's .BTF, or the kernel's memory), and kstack is unwound\n"
	"with its ORC tables (the kernel's: a frame in a module ends the stack).\n"
	"  probe 'fn:vfs_read { @[comm] = count(); }' --duration 10\n"
	"  probe 'syscall:openat /comm == \"cat\"/ { printf(\"%s\\n\", str(arg1)); }'\n"
	"  probe 'fn:do_sys_openat2 /comm == \"cat\"/ { printf(\"%s\\n\", str(args->filename)); }'\n"
	"  probe 'fn:vfs_fsync { @[kstack] = count(); }' --folded fsync.folded\n"
	"  probe 'profile:hz:99 /comm == \"dd\"/ { @[kstack] = count(); }' --folded dd.folded\n"
	"Options: --duration S, -o FILE (JSON lines), --folded FILE (kstack maps for\n"
	"FlameGraph), --max-entries N, --check, --file PATH.";

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

// Resolves the program's points with the session's symbols and the
// kernel's live text read through the stub.
Result<std::vector<std::string>> resolve_points(dbg::Session &session, probes::CheckedProgram &program)
{
	const auto *symbols = dynamic_cast<const dbg::SymbolList *>(session.symbols());
	if (!symbols)
		return make_error("probe needs the kernel's symbol table: attach with --symbols vmlinux (or System.map)");
	return resolve_function_points(
		program, *symbols, symbols->origin(),
		[&session](std::uint64_t address, std::size_t length) { return session.read_memory(address, length); });
}

// kstack's text through the stub: each hit's copied stack unwound with the
// session's ORC tables (the kernel's, as `bt` uses them) and the loaded
// modules' own, and named with the session's symbols. The modules are
// found by walking the kernel's list of modules through the stub
// (module_orc.hpp) when the run starts, and again when a stack ends in text
// none of them holds (a module loaded since); a module's tables, kilobytes
// over a serial line, are read the first time a stack ends in its text.
// All of it while the machine is stopped for a drain.
class SessionStacks {
public:
	SessionStacks(dbg::Session &session, KernelBtf &btf)
		: session_(session), namer_([&session](std::uint64_t a) { return session.symbols()->symbolize(a); })
	{
		if (const auto *orc = dynamic_cast<const dbg::OrcUnwinder *>(session.unwinder())) {
			tables_.emplace(orc->table());
			btf_ = &btf;
			list_modules_through_stub(btf);	// may clear btf_
		} else {
			eprintf("vtice probe: warning: the session has no ORC tables (attached with --no-orc, or they "
				"could not be read); each kstack is its hit's function alone\n");
		}
	}

	std::string text(const trace::ProfileSample &s)
	{
		SampleStack stack = unwind_sample(tables_ ? &*tables_ : nullptr, s, kMaxSampleFrames);
		while (stack.truncated && !stack.frames.empty() && load_module_of(stack.frames.back()))
			stack = unwind_sample(&*tables_, s, kMaxSampleFrames);
		std::vector<std::string> names = namer_.names(s, stack);
		std::string out;
		for (auto n = names.rbegin(); n != names.rend(); ++n)
			out += (out.empty() ? "" : "\n") + *n;
		return out;
	}

private:
	symbols::MemoryReader reader()
	{
		return [this](std::uint64_t address, std::span<std::uint8_t> out) {
			auto bytes = session_.read_memory(address, out.size());
			if (!bytes || bytes->size() != out.size())
				return false;
			std::copy(bytes->begin(), bytes->end(), out.begin());
			return true;
		};
	}

	// The list as it is now; the modules whose tables were read stay read.
	void list_modules_through_stub(KernelBtf &btf)
	{
		auto listed = modules_in_memory(btf);
		if (!listed) {
			eprintf("vtice probe: warning: %s; a frame in a module's text ends its kstack\n",
				listed.error().to_string().c_str());
			btf_ = nullptr;	// the same answer every time: not walked again
			return;
		}
		for (const std::string &why : listed->skipped)
			if (warned_.insert(why).second)
				eprintf("vtice probe: warning: %s\n", why.c_str());
		for (ListedModule &m : listed->modules)
			if (read_.count({m.name, m.text_lo}))
				m.count = 0;
		modules_ = std::move(listed->modules);
	}

	Result<ModuleList> modules_in_memory(KernelBtf &btf)
	{
		auto head = session_.symbols()->lookup("modules");
		if (!head)
			return make_error("the session's symbols have no 'modules' (the kernel's list of modules)");
		auto types = btf.types();
		if (!types)
			return types.error();
		auto orc = module_orc_layout(**types);
		if (!orc)
			return orc.error();
		auto list = module_list_layout(**types);
		if (!list)
			return list.error();
		return list_modules(*orc, *list, reader(), *head);
	}

	ListedModule *module_of(std::uint64_t address)
	{
		for (ListedModule &m : modules_)
			if (m.text_lo <= address && address < m.text_hi)
				return &m;
		return nullptr;
	}

	// The tables of the module whose text holds address, read now; false
	// when none does (the list walked again once for its page), or its
	// tables were read (or failed) before.
	bool load_module_of(std::uint64_t address)
	{
		ListedModule *m = module_of(address);
		if (!m && btf_ && unknown_pages_.insert(address >> 12).second) {
			list_modules_through_stub(*btf_);
			m = module_of(address);
		}
		if (!m || m->count == 0)
			return false;
		auto table = load_listed_module(*m, reader(), tables_->kernel());
		m->count = 0;	// asked once
		read_.insert({m->name, m->text_lo});
		if (!table) {
			eprintf("vtice probe: warning: %s: %s; its frames end their kstacks\n", m->name.c_str(),
				table.error().to_string().c_str());
			return false;
		}
		loaded_.push_back(std::move(*table));
		tables_->set_modules(loaded_);
		return true;
	}

	dbg::Session &session_;
	KernelBtf *btf_ = nullptr;
	FrameNamer namer_;
	std::optional<symbols::OrcTables> tables_;
	std::vector<ListedModule> modules_;
	std::vector<symbols::OrcTable> loaded_;
	std::set<std::pair<std::string, std::uint64_t>> read_;	// (name, text) of the modules asked for their tables
	std::set<std::uint64_t> unknown_pages_;	// pages the list was walked again for
	std::set<std::string> warned_;
};

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
	if (!o->check_only && !session.target().features().probes)
		return make_error(session.target().describe() + " arms no probes: probe needs the vtice hypervisor's stub");
	auto btf = !o->btf.empty() ? std::make_shared<KernelBtf>(o->btf)
				   : std::make_shared<KernelBtf>(KernelBtf::Borrow([&session, &ctx] {
					     return session.kernel_types().get(session, ctx.out);
				     }));
	auto types = kernel_types(btf);
	auto program = probes::compile_program(
		o->source, [](std::string_view name) { return trace::syscall_number(name); }, kernel_params(btf),
		types.get());
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
	std::optional<SessionStacks> stacks;
	if (program->uses_kstack()) {
		stacks.emplace(session, *btf);
		naming.stack_text = [&stacks](const trace::ProfileSample &s) { return stacks->text(s); };
	}
	if (run_probe_program(*o, *program, &source, naming) != kExitOk)
		return make_error("the probe run failed");
	session.invalidate_registers();	// the machine ran behind the session's back
	return {};
}

}  // namespace

const dbg::Command kCmdProbe = {
	"probe", {}, "probe 'PROGRAM' [--duration S] [-o FILE] [--max-entries N] [--check]",
	"run a vtice probe program through the stub", kProbeHelp, run_probe};

}  // namespace vtice::console
