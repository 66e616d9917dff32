// vtice attach: connect to a GDB RSP stub and run debugger commands, from a
// file or stdin in batch mode (plain output, for scripts and tests).
#include <cstdio>
#include <functional>
#include <optional>

#include <unistd.h>

#include "args.hpp"
#include "attach_session.hpp"
#include "cmd_attach_probe.hpp"
#include "commands/command.hpp"
#include "line_input.hpp"
#include "messages.hpp"
#include "session_model.hpp"
#include "subcommands.hpp"
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
	"  --graph FILE       on the debugger screen, show FILE's call tree (a vtice\n"
	"                     trace file) in the trace pane from the start; on a\n"
	"                     recording's replay the pane follows the replay position\n"
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


// The batch file, or standard input.
Result<LineInput> open_commands(const ParsedArgs &args)
{
	auto path = args.get("--batch").value_or("-");
	auto in = LineInput::open(path);
	if (!in)
		return make_error("--batch: " + in.error().to_string());
	return in;
}

// A failure before the command loop; after SIGTERM or SIGHUP, 128+N.
int fail(const Error &error, int status) { return fail_command("vtice attach", error, status); }

}  // namespace

int cmd_attach(int argc, char **argv)
{
	int status = kExitOk;
	auto args = parse_target_command("vtice attach", argc, argv,
					 {{"--batch", true}, {"--echo", false}, {"--keep-going", false}, {"--graph", true}},
					 kHelp, status);
	if (!args)
		return status;
	// From here on no signal kills vtice: each ends what it interrupts.
	interrupts::install();
	dbg::register_command(&kCmdProbe);
	bool batch = args->has("--batch");
	auto options = check_attach_options(*args, batch ? 60000 : -1);
	if (!options)
		return fail(options.error(), kExitUsage);
	auto in = open_commands(*args);
	if (!in)
		return fail(in.error(), kExitUsage);
	// The debugger screen shows what attaching prints in its output pane.
	bool interactive = !batch && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	StdOutput stdout_output;
	dbg::StringOutput screen_output;
	dbg::Output &out = interactive ? static_cast<dbg::Output &>(screen_output) : stdout_output;
	// Attaching and learning the kernel are one command for Ctrl-C.
	interrupts::begin_command(-1);
	auto attached = attach_target(args->positional[0], *options, out);
	if (!attached)
		return fail(attached.error(), kExitFailure);
	dbg::Session &session = *attached->session;
	print_attached("vtice attach", session, attached->info, out);
	if (interactive)
		return tui::run_interactive(session, attached->stop, screen_output.text(),
					    args->get("--graph").value_or(""));
	dbg::CommandContext ctx{session, out, options->timeout_ms};
	dbg::print_stop(ctx, attached->stop);
	status = run_commands(ctx, *in, batch, args->has("--echo"), args->has("--keep-going"));
	return end_session("vtice attach", session, out, status);
}

}  // namespace vtice::console
