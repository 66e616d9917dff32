// vtice attach: connect to a GDB RSP stub and run debugger commands, from a
// file or stdin in batch mode (plain output, for scripts and tests).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

#include <sys/stat.h>
#include <unistd.h>

#include "args.hpp"
#include "commands/command.hpp"
#include "btf/btf_source.hpp"
#include "kernel_cache.hpp"
#include "kernel_setup.hpp"
#include "line_input.hpp"
#include "messages.hpp"
#include "rsp/rsp_target.hpp"
#include "session.hpp"
#include "session_model.hpp"
#include "subcommands.hpp"
#include "vtice/escape.hpp"
#include "vtice/interrupts.hpp"

namespace vtice::console {

namespace {

const char kHelp[] =
	"usage: vtice attach TARGET [--batch FILE|-] [--symbols FILE] [options]\n"
	"\n"
	"Attaches to a GDB Remote Serial Protocol stub (QEMU -gdb, kgdb, the vtice\n"
	"hypervisor) and runs debugger commands. The target stops on attach.\n"
	"\n"
	"TARGET:\n"
	"  HOST:PORT          TCP, e.g. 127.0.0.1:1234 (':1234' means localhost)\n"
	"  unix:PATH          a unix socket\n"
	"  /dev/ttyS0         a serial line or pty (raw, --baud), a FIFO, or a unix\n"
	"                     socket's path; a regular file or directory is refused\n"
	"\n"
	"options:\n"
	"  --batch FILE|-     run the commands in FILE (or stdin), one per line, then\n"
	"                     exit; without it, on a terminal, the debugger screen opens\n"
	"                     (F1 there lists the keys), else commands are read from\n"
	"                     stdin with a prompt\n"
	"  --symbols FILE     kernel symbols: vmlinux, vmlinuz, System.map or\n"
	"                     /proc/kallsyms text; its banner is checked against the\n"
	"                     running kernel's. Without it, on any stub but QEMU's (a\n"
	"                     slow link), the images in /boot and /usr/lib/debug/boot\n"
	"                     are tried first (the one whose banner the kernel shows);\n"
	"                     else kallsyms is recovered from guest memory, with progress\n"
	"  --no-image-search  do not look in /boot for the running kernel's image\n"
	"  --no-cache         neither read nor write the cache of kernel memory that\n"
	"                     makes a second attach to the same kernel near-instant\n"
	"                     ($XDG_CACHE_HOME/vtice or ~/.cache/vtice, keyed by the\n"
	"                     kernel's banner)\n"
	"  --btf FILE         kernel types for ptype, offsetof and typed print: raw BTF\n"
	"                     (a copy of /sys/kernel/btf/vmlinux) or an image with .BTF;\n"
	"                     default: the --symbols image's .BTF, else the running\n"
	"                     kernel's BTF read from guest memory on first use\n"
	"  --no-orc           do not read the ORC unwind tables from the guest\n"
	"  --timeout SECONDS  the longest one command may take, waits for a stop and\n"
	"                     chains of automatic continues included (default: no\n"
	"                     limit interactively, 60 in batch mode)\n"
	"  --baud N           a serial line's speed (default 115200)\n"
	"  --echo             print each batch command before its output\n"
	"  --keep-going       in batch mode, run the remaining commands after an error\n"
	"\n"
	"Type 'help' at the prompt (or put it in the batch file) for the commands:\n"
	"gdb's names (break, continue, stepi, nexti, finish, bt, x, info registers,\n"
	"disas, watch, detach, trace) with WinDbg/SoftICE aliases (bp, g, t, p, k, u,\n"
	"r, db/dq). quit, the end of the batch input, SIGTERM and SIGHUP detach:\n"
	"breakpoints are removed and the target runs on ('disconnect' leaves it\n"
	"stopped instead). Ctrl-C interrupts the running command; a second one\n"
	"gives up on a stub that ignores the break-in. SIGTERM and SIGHUP end the\n"
	"session within 2 s whatever the stub does. Exit status: 0 if every command\n"
	"succeeded, 1 otherwise, 128+N after signal N.\n";

class StdOutput final : public dbg::Output {
public:
	// Everything the debugger prints may quote the target: escaped.
	void write(std::string_view text) override
	{
		end_progress();
		write_escaped(stdout, text);
		std::fflush(stdout);
	}
	// On a terminal the line is redrawn in place; into a file or a pipe, a
	// line a second at most, so a log keeps the story without the flood.
	void progress(std::string_view text) override
	{
		std::string line = escape_text(text, Layout::Field);
		if (terminal_) {
			std::fprintf(stderr, "\r\033[K%s", line.c_str());
			pending_newline_ = true;
			return;
		}
		auto now = std::chrono::steady_clock::now();
		if (now - last_ < std::chrono::seconds(1))
			return;
		last_ = now;
		std::fprintf(stderr, "%s\n", line.c_str());
	}
	~StdOutput() override { end_progress(); }

private:
	void end_progress()
	{
		if (pending_newline_)
			std::fputc('\n', stderr);
		pending_newline_ = false;
	}
	bool terminal_ = isatty(STDERR_FILENO);
	bool pending_newline_ = false;
	std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// The end of every session that did not detach or disconnect itself:
// breakpoints out, the target running (docs/hardening.md).
// After SIGTERM or SIGHUP the cleanup has a budget: a stub that does not
// answer is given up, never waited for.
int end_session(dbg::Session &session, dbg::Output &out, int status)
{
	if (interrupts::end_signal())
		interrupts::begin_cleanup();
	else
		interrupts::end_command();
	if (session.state() != dbg::SessionState::Detached) {
		if (auto r = session.detach(); !r) {
			eprintf("vtice attach: could not detach: %s\n", r.error().to_string().c_str());
			status = kExitFailure;
		} else {
			out.print("Detached; breakpoints removed, the target runs on.\n");
		}
	}
	return interrupts::end_signal() ? 128 + interrupts::end_signal() : status;
}

// The lines of a block ("commands N" ... "end") come from the same input,
// at a ">" prompt when interactive.
std::function<std::optional<std::string>()> block_reader(dbg::Output &out, LineInput &in, bool batch, bool echo)
{
	return [&out, &in, batch, echo]() -> std::optional<std::string> {
		if (!batch) {
			std::fputs(">", stdout);
			std::fflush(stdout);
		}
		auto line = in.next();
		if (!line || !*line)
			return std::nullopt;
		if (echo)
			out.print(">%s\n", (*line)->c_str());
		return **line;
	};
}

int run_commands(dbg::CommandContext &ctx, LineInput &in, bool batch, bool echo, bool keep_going)
{
	int status = kExitOk;
	ctx.read_line = block_reader(ctx.out, in, batch, echo);
	for (;;) {
		if (!batch) {
			std::fputs("(vtice) ", stdout);
			std::fflush(stdout);
		}
		if (interrupts::end_signal())
			break;
		auto next = in.next();
		if (!next) {
			eprintf("vtice attach: %s\n", next.error().to_string().c_str());
			status = kExitFailure;
			break;
		}
		if (!*next || interrupts::end_signal())
			break;
		const std::string &line = **next;
		if (line == "quit" || line == "q" || line == "exit")
			break;
		if (echo && !line.empty() && line[0] != '#')
			ctx.out.print("(vtice) %s\n", line.c_str());
		auto r = dbg::execute_line(ctx, line);
		if (!r) {
			ctx.out.print("error: %s\n", r.error().to_string().c_str());
			status = kExitFailure;
			if (batch && !keep_going)
				break;
		}
		if (ctx.session.state() == dbg::SessionState::Detached || interrupts::end_signal())
			break;
	}
	return status;
}

}  // namespace

namespace {

struct AttachOptions {
	int timeout_ms = -1;
	dbg::rsp::TransportOptions transport;
	dbg::KernelSetupOptions setup;
	std::string btf_file;
	std::optional<dbg::btf::Types> btf;
};

// Every option checked, and every file the user named read, before vtice
// connects: a bad one is a usage error that costs the target nothing.
Result<AttachOptions> check_options(const ParsedArgs &args)
{
	AttachOptions o;
	o.timeout_ms = args.has("--batch") ? 60000 : -1;
	if (auto t = args.get("--timeout")) {
		auto ms = parse_timeout_ms("--timeout", *t);
		if (!ms)
			return ms.error();
		o.timeout_ms = *ms;
	}
	if (auto b = args.get("--baud")) {
		auto baud = parse_count("--baud", *b, 1, 4000000);
		if (!baud || !dbg::rsp::supported_baud(static_cast<unsigned>(*baud)))
			return make_error("--baud '" + *b + "': a serial speed such as 9600, 115200 or 921600");
		o.transport.baud = static_cast<unsigned>(*baud);
	}
	if (auto spec = dbg::rsp::parse_target_spec(args.positional[0]); !spec)
		return spec.error();
	o.setup.symbols_file = args.get("--symbols").value_or("");
	if (!o.setup.symbols_file.empty()) {
		// Read more than once (names, then ORC and BTF on demand).
		struct stat info;
		if (::stat(o.setup.symbols_file.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
			return make_error("--symbols: " + o.setup.symbols_file +
					  " is not a regular file (attach reads it more than once)");
		auto symbols = dbg::default_symbol_file_loader()(o.setup.symbols_file);
		if (!symbols)
			return make_error("--symbols: " + symbols.error().to_string());
		o.setup.symbols_loaded = std::move(*symbols);
	}
	o.btf_file = args.get("--btf").value_or("");
	if (!o.btf_file.empty()) {
		auto types = dbg::btf::load_file(o.btf_file);
		if (!types)
			return make_error("--btf: " + types.error().to_string());
		o.btf.emplace(std::move(*types));
	}
	o.setup.load_orc = !args.has("--no-orc");
	if (!args.has("--no-cache"))
		o.setup.cache_dir = dbg::default_cache_dir();
	return o;
}

// The batch file, or standard input.
Result<LineInput> open_commands(const ParsedArgs &args)
{
	auto path = args.get("--batch").value_or("-");
	auto in = LineInput::open(path);
	if (!in)
		return make_error("--batch: " + in.error().to_string());
	return in;
}

void print_attached(dbg::Session &session, const Result<dbg::KernelInfo> &info, dbg::Output &out)
{
	for (const auto &warning : session.target().features().warnings)
		eprintf("vtice attach: warning: %s\n", warning.c_str());
	out.print("Attached to %s (%zu registers, thread %d)\n", session.target().describe().c_str(),
		  session.target().layout().registers.size(), session.target().selected_thread());
	if (!info)
		return;
	if (info->slide)
		out.print("KASLR slide 0x%llx (IDT vector 0 -> 0x%llx)\n", static_cast<unsigned long long>(*info->slide),
			  static_cast<unsigned long long>(*info->divide_error_handler));
	out.print("%s\n%s\n", info->symbols.c_str(), info->orc.c_str());
	if (!info->cache.empty())
		out.print("kernel cache: %s\n", info->cache.c_str());
}

// A failure before the command loop; after SIGTERM or SIGHUP, 128+N.
int fail(const Error &error, int status)
{
	eprintf("vtice attach: %s\n", error.to_string().c_str());
	return interrupts::end_signal() ? 128 + interrupts::end_signal() : status;
}

}  // namespace

int cmd_attach(int argc, char **argv)
{
	auto args = parse_args(argc, argv, {{"--batch", true}, {"--symbols", true}, {"--btf", true}, {"--no-orc", false},
					    {"--no-image-search", false}, {"--no-cache", false}, {"--timeout", true},
					    {"--echo", false}, {"--keep-going", false}, {"--baud", true}});
	if (!args)
		return fail(args.error(), kExitUsage);
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	if (args->positional.size() != 1)
		return fail(make_error("give exactly one TARGET (see --help)"), kExitUsage);
	// From here on no signal kills vtice: each ends what it interrupts.
	interrupts::install();
	auto options = check_options(*args);
	if (!options)
		return fail(options.error(), kExitUsage);
	auto in = open_commands(*args);
	if (!in)
		return fail(in.error(), kExitUsage);
	auto target = dbg::rsp::RspTarget::connect(args->positional[0], {}, options->transport);
	if (!target)
		return fail(target.error(), kExitFailure);
	dbg::Session session(std::move(*target));
	session.kernel_types().set_sources(options->btf_file, options->setup.symbols_file);
	if (options->btf)
		session.kernel_types().adopt(std::move(*options->btf));
	bool batch = args->has("--batch");
	// The debugger screen shows what attaching prints in its output pane.
	bool interactive = !batch && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	StdOutput stdout_output;
	dbg::StringOutput screen_output;
	dbg::Output &out = interactive ? static_cast<dbg::Output &>(screen_output) : stdout_output;
	// Attaching and learning the kernel are one command for Ctrl-C.
	interrupts::begin_command(-1);
	auto stop = session.attach();
	if (!stop)
		return fail(stop.error(), kExitFailure);
	// QEMU's gdbstub is a fast local socket: memory beats inflating images.
	if (options->setup.symbols_file.empty() && !args->has("--no-image-search") &&
	    !session.target().features().physical_memory)
		options->setup.image_candidates = dbg::installed_kernel_images();
	auto info = dbg::setup_kernel(session, options->setup, out);
	print_attached(session, info, out);
	if (interactive)
		return tui::run_interactive(session, *stop, screen_output.text());
	dbg::CommandContext ctx{session, out, options->timeout_ms};
	dbg::print_stop(ctx, *stop);
	int status = run_commands(ctx, *in, batch, args->has("--echo"), args->has("--keep-going"));
	return end_session(session, out, status);
}

}  // namespace vtice::console
