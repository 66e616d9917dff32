// vtice replay: a step recording (`trace --record -o FILE`) explored
// without the target: commands from --batch FILE, a pipe or the prompt.
#include <unistd.h>

#include <cstdio>

#include "args.hpp"
#include "line_input.hpp"
#include "messages.hpp"
#include "replay_shell.hpp"
#include "subcommands.hpp"

namespace vtice::console {

static const char kReplayHelp[] =
	"usage: vtice replay TRACE [--symbols VMLINUX] [--batch FILE|-] [--keep-going]\n"
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
	"  when REG==VALUE / reverse-when REG==VALUE   the next / previous step where REG becomes VALUE\n"
	"  where, info, help, quit\n"
	"\n"
	"A damaged file is replayed up to the damage, which is reported.\n";

int cmd_replay(int argc, char **argv)
{
	auto args = parse_args(argc, argv, {{"--batch", true}, {"--keep-going", false}, {"--symbols", true}});
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
