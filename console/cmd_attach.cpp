// vtice attach: connect to a GDB RSP stub and run debugger commands, from a
// file or stdin in batch mode (plain output, for scripts and tests).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

#include <unistd.h>

#include "args.hpp"
#include "commands/command.hpp"
#include "btf/btf_source.hpp"
#include "kernel_cache.hpp"
#include "kernel_setup.hpp"
#include "rsp/rsp_target.hpp"
#include "session.hpp"
#include "session_model.hpp"
#include "subcommands.hpp"

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
	"  /dev/ttyS0         a serial line or pty (raw, 115200 baud)\n"
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
	"  --timeout SECONDS  how long continue/finish wait for a stop (default: forever\n"
	"                     interactively, 60 in batch mode)\n"
	"  --echo             print each batch command before its output\n"
	"  --keep-going       in batch mode, run the remaining commands after an error\n"
	"\n"
	"Type 'help' at the prompt (or put it in the batch file) for the commands:\n"
	"gdb's names (break, continue, stepi, nexti, finish, bt, x, info registers,\n"
	"disas, watch, detach, trace) with WinDbg/SoftICE aliases (bp, g, t, p, k, u,\n"
	"r, db/dq). quit, the end of the batch input, SIGTERM and SIGHUP detach:\n"
	"breakpoints are removed and the target runs on ('disconnect' leaves it\n"
	"stopped instead). Exit status: 0 if every command succeeded, 1 otherwise,\n"
	"128+N after signal N.\n";

class StdOutput final : public dbg::Output {
public:
	void write(std::string_view text) override
	{
		end_progress();
		std::fwrite(text.data(), 1, text.size(), stdout);
		std::fflush(stdout);
	}
	// On a terminal the line is redrawn in place; into a file or a pipe, a
	// line a second at most, so a log keeps the story without the flood.
	void progress(std::string_view text) override
	{
		if (terminal_) {
			std::fprintf(stderr, "\r\033[K%.*s", int(text.size()), text.data());
			pending_newline_ = true;
			return;
		}
		auto now = std::chrono::steady_clock::now();
		if (now - last_ < std::chrono::seconds(1))
			return;
		last_ = now;
		std::fprintf(stderr, "%.*s\n", int(text.size()), text.data());
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

dbg::Session *g_session = nullptr;
volatile std::sig_atomic_t g_ending_signal = 0;

// A running target is asked to stop (0x03 is all the handler sends); the
// command loop does the rest. Ctrl-C interrupts the command; SIGTERM and
// SIGHUP also end the session, which then detaches like quit.
void on_signal(int signal)
{
	// A third signal while the stub does not answer ends vtice at once.
	static int count = 0;
	if (++count > 2)
		std::_Exit(128 + signal);
	if (signal != SIGINT)
		g_ending_signal = signal;
	if (g_session && g_session->state() == dbg::SessionState::Running)
		(void)g_session->target().interrupt();
}

// SIGTERM and SIGHUP without SA_RESTART, so that a read of the next
// command returns instead of waiting for a line that may never come;
// Ctrl-C at the prompt changes nothing, as in gdb.
void install_signal_handlers()
{
	struct sigaction action {};
	action.sa_handler = on_signal;
	sigemptyset(&action.sa_mask);
	for (int signal : {SIGTERM, SIGHUP})
		sigaction(signal, &action, nullptr);
	action.sa_flags = SA_RESTART;
	sigaction(SIGINT, &action, nullptr);
}

// The end of every session that did not detach or disconnect itself:
// breakpoints out, the target running (docs/hardening.md).
int end_session(dbg::Session &session, dbg::Output &out, int status)
{
	if (session.state() != dbg::SessionState::Detached) {
		if (auto r = session.detach(); !r) {
			std::fprintf(stderr, "vtice attach: could not detach: %s\n", r.error().to_string().c_str());
			status = kExitFailure;
		} else {
			out.print("Detached; breakpoints removed, the target runs on.\n");
		}
	}
	return g_ending_signal ? 128 + g_ending_signal : status;
}

// The lines of a block ("commands N" ... "end") come from the same input,
// at a ">" prompt when interactive.
std::function<std::optional<std::string>()> block_reader(dbg::Output &out, std::istream &in, bool batch, bool echo)
{
	return [&out, &in, batch, echo]() -> std::optional<std::string> {
		if (!batch) {
			std::fputs(">", stdout);
			std::fflush(stdout);
		}
		std::string line;
		if (!std::getline(in, line))
			return std::nullopt;
		if (echo)
			out.print(">%s\n", line.c_str());
		return line;
	};
}

int run_commands(dbg::CommandContext &ctx, std::istream &in, bool batch, bool echo, bool keep_going)
{
	int status = kExitOk;
	ctx.read_line = block_reader(ctx.out, in, batch, echo);
	std::string line;
	for (;;) {
		if (!batch) {
			std::fputs("(vtice) ", stdout);
			std::fflush(stdout);
		}
		if (g_ending_signal || !std::getline(in, line) || g_ending_signal)
			break;
		if (line == "quit" || line == "q" || line == "exit")
			break;
		if (echo && !line.empty() && line[0] != '#')
			ctx.out.print("(vtice) %s\n", line.c_str());
		auto r = dbg::execute_line(ctx, line);
		if (!r) {
			std::fprintf(stdout, "error: %s\n", r.error().to_string().c_str());
			std::fflush(stdout);
			status = kExitFailure;
			if (batch && !keep_going)
				break;
		}
		if (ctx.session.state() == dbg::SessionState::Detached || g_ending_signal)
			break;
	}
	return status;
}

}  // namespace

int cmd_attach(int argc, char **argv)
{
	auto args = parse_args(argc, argv, {{"--batch", true}, {"--symbols", true}, {"--btf", true}, {"--no-orc", false},
					    {"--no-image-search", false}, {"--no-cache", false}, {"--timeout", true}, {"--echo", false}, {"--keep-going", false}});
	if (!args) {
		std::fprintf(stderr, "vtice attach: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	if (args->positional.size() != 1) {
		std::fprintf(stderr, "vtice attach: give exactly one TARGET (see --help)\n");
		return kExitUsage;
	}
	bool batch = args->has("--batch");
	int timeout_ms = batch ? 60000 : -1;
	if (auto t = args->get("--timeout")) {
		char *end = nullptr;
		double seconds = std::strtod(t->c_str(), &end);
		if (t->empty() || *end || seconds <= 0) {
			std::fprintf(stderr, "vtice attach: --timeout '%s' is not a number of seconds\n", t->c_str());
			return kExitUsage;
		}
		timeout_ms = static_cast<int>(seconds * 1000);
	}
	std::ifstream file;
	std::istream *in = &std::cin;
	if (batch && *args->get("--batch") != "-") {
		file.open(*args->get("--batch"));
		if (!file) {
			std::fprintf(stderr, "vtice attach: cannot open batch file '%s'\n", args->get("--batch")->c_str());
			return kExitUsage;
		}
		in = &file;
	}
	auto target = dbg::rsp::RspTarget::connect(args->positional[0]);
	if (!target) {
		std::fprintf(stderr, "vtice attach: %s\n", target.error().to_string().c_str());
		return kExitFailure;
	}
	dbg::Session session(std::move(*target));
	// The debugger screen shows what attaching prints in its output pane.
	bool interactive = !batch && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	StdOutput stdout_output;
	dbg::StringOutput screen_output;
	dbg::Output &out = interactive ? static_cast<dbg::Output &>(screen_output) : stdout_output;
	auto stop = session.attach();
	if (!stop) {
		std::fprintf(stderr, "vtice attach: %s\n", stop.error().to_string().c_str());
		return kExitFailure;
	}
	dbg::KernelSetupOptions setup;
	setup.symbols_file = args->get("--symbols").value_or("");
	setup.load_orc = !args->has("--no-orc");
	// QEMU's gdbstub is a fast local socket: memory beats inflating images.
	if (setup.symbols_file.empty() && !args->has("--no-image-search") &&
	    !session.target().features().physical_memory)
		setup.image_candidates = dbg::installed_kernel_images();
	if (!args->has("--no-cache"))
		setup.cache_dir = dbg::default_cache_dir();
	auto info = dbg::setup_kernel(session, setup, out);
	session.kernel_types().set_sources(args->get("--btf").value_or(""), setup.symbols_file);
	for (const auto &warning : session.target().features().warnings)
		std::fprintf(stderr, "vtice attach: warning: %s\n", warning.c_str());
	out.print("Attached to %s (%zu registers, thread %d)\n", session.target().describe().c_str(),
		  session.target().layout().registers.size(), session.target().selected_thread());
	if (info) {
		if (info->slide)
			out.print("KASLR slide 0x%llx (IDT vector 0 -> 0x%llx)\n",
				  static_cast<unsigned long long>(*info->slide),
				  static_cast<unsigned long long>(*info->divide_error_handler));
		out.print("%s\n%s\n", info->symbols.c_str(), info->orc.c_str());
		if (!info->cache.empty())
			out.print("kernel cache: %s\n", info->cache.c_str());
	}
	if (interactive)
		return tui::run_interactive(session, *stop, screen_output.text());
	dbg::CommandContext ctx{session, out, timeout_ms};
	dbg::print_stop(ctx, *stop);
	g_session = &session;
	install_signal_handlers();
	int status = run_commands(ctx, *in, batch, args->has("--echo"), args->has("--keep-going"));
	status = end_session(session, out, status);
	g_session = nullptr;
	return status;
}

}  // namespace vtice::console
