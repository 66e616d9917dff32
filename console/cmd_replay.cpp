// vtice replay: a step recording (`trace --record -o FILE`) explored
// without the target: commands from --batch FILE, a pipe or the prompt.
#include <unistd.h>

#include <cstdio>
#include <future>
#include <thread>

#include "args.hpp"
#include "line_input.hpp"
#include "messages.hpp"
#include "replay_shell.hpp"
#include "rsp/transport.hpp"
#include "rsp_server.hpp"
#include "subcommands.hpp"

namespace vtice::console {

static const char kReplayHelp[] =
	"usage: vtice replay TRACE [--symbols VMLINUX] [--batch FILE|-] [--keep-going]\n"
	"       vtice replay TRACE --tui [--symbols VMLINUX]\n"
	"\n"
	"Moves through a recorded kernel path (vtice attach: trace --record -o TRACE)\n"
	"forwards and backwards, and shows the registers and memory as they were at\n"
	"any step. Nothing runs: every value comes from the recording, and memory it\n"
	"never saw shows as ?? instead of a guess. For stock gdb, see vtice serve-replay.\n"
	"\n"
	"  --batch FILE   read commands from FILE (- = standard input); without it,\n"
	"                 standard input, with a prompt when it is a terminal\n"
	"  --keep-going   run the remaining commands after one fails (exit status 1)\n"
	"  --symbols VMLINUX  the recorded kernel's vmlinux (Debian: linux-image-*-dbg):\n"
	"                 bt then unwinds with its ORC tables, past the recording's\n"
	"                 start, as far as the recording saw the stack\n"
	"  --tui          the debugger screen of vtice attach on the recording instead\n"
	"                 of these commands: F8/F10/F5/F12 forwards, Shift-F8/F10/F5/F12\n"
	"                 backwards (docs/console.md); the trace pane shows the\n"
	"                 recording's call tree, its cursor on the call the replay\n"
	"                 stands in\n"
	"\n"
	"Commands:\n"
	"  stepi [N], si          forward N instructions (a REP iteration is one)\n"
	"  reverse-stepi [N], rsi back N instructions\n"
	"  nexti, ni / reverse-nexti, rni   one instruction, calls run through\n"
	"  finish / reverse-finish   to the caller / back to the call that entered this function\n"
	"  goto N | FUNC[+OFF] | ADDR    step N, or the first step whose pc is there\n"
	"  registers [R...], regs  the registers at this step\n"
	"  x ADDR [LEN]           memory as it was at this step\n"
	"  bt                     the calls that enclose this step (ORC with --symbols)\n"
	"  last-write ADDR [LEN]  the step that last wrote any of those bytes before here\n"
	"  writes ADDR [LEN]      every step that wrote them, old and new bytes\n"
	"  accesses               the memory this step's instruction reads and writes\n"
	"  when REG==VALUE / reverse-when REG==VALUE   the next / previous step where REG becomes VALUE\n"
	"  where, info, help, quit\n"
	"\n"
	"A damaged file is replayed up to the damage, which is reported.\n";

int cmd_attach(int argc, char **argv);

// The recording served on a loopback port for the length of one vtice
// attach session on it: the TUI then drives it as it drives any target.
static int replay_in_tui(const std::string &path, replay::ReplayFile &file, const std::optional<std::string> &vmlinux)
{
	std::promise<std::string> where;
	auto announced = where.get_future();
	bool listening = false;  // set and read on the server's thread only
	replay::ServeOptions options;
	options.once = true;
	options.announce = [&](const std::string &address) {
		listening = true;
		where.set_value(address);
	};
	std::thread server([&] {
		if (auto served = replay::serve_replay(*file.replay, options); !served) {
			eprintf("vtice replay: %s\n", served.error().to_string().c_str());
			if (!listening)
				where.set_value("");  // nothing to attach to
		}
	});
	std::string address = announced.get();
	int status = kExitFailure;
	if (!address.empty()) {
		// The trace pane shows the recording's call tree and follows the replay.
		std::vector<std::string> words = {"attach", address, "--no-cache", "--graph", path};
		if (vmlinux)
			words.insert(words.end(), {"--symbols", *vmlinux});
		std::vector<char *> argv;
		for (std::string &word : words)
			argv.push_back(word.data());
		argv.push_back(nullptr);
		status = cmd_attach(static_cast<int>(words.size()), argv.data());
		// An attach that never connected (a bad --symbols, say) leaves the
		// server waiting for its one client: a connection that leaves at
		// once ends it. After a session it finds the port closed.
		(void)dbg::rsp::connect_transport(address);
	}
	server.join();
	return status;
}

int cmd_replay(int argc, char **argv)
{
	auto args = parse_args(argc, argv,
			       {{"--batch", true}, {"--keep-going", false}, {"--symbols", true}, {"--tui", false}});
	if (!args) {
		eprintf("vtice replay: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kReplayHelp, stdout);
		return kExitOk;
	}
	if (args->positional.size() != 1) {
		eprintf("vtice replay: one TRACE file, recorded with `trace --record` (see --help)\n");
		return kExitUsage;
	}
	auto input = LineInput::open(args->get("--batch").value_or("-"));
	if (!input) {
		eprintf("vtice replay: --batch: %s\n", input.error().to_string().c_str());
		return kExitUsage;
	}
	auto file = replay::open_replay(args->positional[0]);
	if (!file) {
		eprintf("vtice replay: %s\n", file.error().to_string().c_str());
		return kExitFailure;
	}
	if (file->damage)
		eprintf("vtice replay: the file is damaged; replaying what comes before: %s\n",
			file->damage->to_string().c_str());
	if (args->has("--tui")) {
		if (args->has("--batch") || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
			eprintf("vtice replay: --tui needs a terminal and no --batch (without one, give the commands)\n");
			return kExitUsage;
		}
		return replay_in_tui(args->positional[0], *file, args->get("--symbols"));
	}
	ReplayShell shell(*file, stdout);
	if (auto vmlinux = args->get("--symbols")) {
		auto orc = load_replay_orc(*vmlinux, file->data.symbols);
		if (!orc) {
			eprintf("vtice replay: --symbols: %s\n", orc.error().to_string().c_str());
			return kExitFailure;
		}
		std::printf("ORC tables of %s, slid by %+lld (%zu of the recording's %zu functions agree)\n",
			    vmlinux->c_str(), static_cast<long long>(orc->slide), orc->agreeing, file->data.symbols.size());
		shell.use_orc(std::move(*orc));
	}
	shell.print_summary();
	bool prompt = !args->has("--batch") && isatty(STDIN_FILENO);
	bool keep_going = args->has("--keep-going");
	int status = file->damage ? kExitFailure : kExitOk;
	for (;;) {
		if (prompt) {
			std::fputs("(replay) ", stdout);
			std::fflush(stdout);
		}
		auto line = input->next();
		if (!line) {
			eprintf("vtice replay: %s\n", line.error().to_string().c_str());
			return kExitFailure;
		}
		if (!*line || **line == "quit" || **line == "q")
			break;
		if (!shell.run(**line)) {
			status = kExitFailure;
			if (!prompt && !keep_going)
				break;
		}
		std::fflush(stdout);
	}
	return status;
}

}  // namespace vtice::console
