// vtice serve-replay: a step recording served to stock gdb over RSP, with
// reverse execution (replay/rsp_server.hpp).
#include <cstdio>

#include "args.hpp"
#include "messages.hpp"
#include "replay_file.hpp"
#include "rsp_server.hpp"
#include "subcommands.hpp"

namespace vtice::console {

static const char kServeReplayHelp[] =
	"usage: vtice serve-replay TRACE [--port N] [--host ADDR] [--once]\n"
	"\n"
	"Serves a recorded kernel path (vtice attach: trace --record -o TRACE) as a\n"
	"GDB remote target that can run backwards. In stock gdb:\n"
	"\n"
	"  gdb vmlinux -ex 'target remote 127.0.0.1:PORT'\n"
	"  (gdb) reverse-stepi | reverse-continue | reverse-finish | stepi | continue\n"
	"  (gdb) watch *(long *)ADDR; reverse-continue   -- who wrote it\n"
	"  (gdb) monitor position | monitor goto N\n"
	"\n"
	"Registers and memory come from the recording; memory it never saw answers\n"
	"with an error, never a guess, and nothing can be written. It starts at the\n"
	"recording's first step; running off either end stops with gdb's\n"
	"\"No more reverse-execution history\".\n"
	"\n"
	"  --port N     TCP port (default 0: any free port, printed at start)\n"
	"  --host ADDR  IPv4 address to listen on (default 127.0.0.1)\n"
	"  --once       end when the first gdb disconnects (default: wait for the next; k ends)\n";

int cmd_serve_replay(int argc, char **argv)
{
	auto args = parse_args(argc, argv, {{"--port", true}, {"--host", true}, {"--once", false}});
	if (!args) {
		eprintf("vtice serve-replay: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kServeReplayHelp, stdout);
		return kExitOk;
	}
	if (args->positional.size() != 1) {
		eprintf("vtice serve-replay: one TRACE file, recorded with `trace --record` (see --help)\n");
		return kExitUsage;
	}
	replay::ServeOptions options;
	if (auto port = args->get("--port")) {
		auto n = parse_count("--port", *port, 0, 65535);
		if (!n) {
			eprintf("vtice serve-replay: %s\n", n.error().to_string().c_str());
			return kExitUsage;
		}
		options.port = static_cast<unsigned>(*n);
	}
	options.host = args->get("--host").value_or("127.0.0.1");
	options.once = args->has("--once");
	auto file = replay::open_replay(args->positional[0]);
	if (!file) {
		eprintf("vtice serve-replay: %s\n", file.error().to_string().c_str());
		return kExitFailure;
	}
	if (file->damage)
		eprintf("vtice serve-replay: the file is damaged; serving what comes before: %s\n",
			file->damage->to_string().c_str());
	options.announce = [&](const std::string &where) {
		std::printf("serving %zu recorded steps on %s (gdb: target remote %s)\n", file->replay->steps(),
			    where.c_str(), where.c_str());
		std::fflush(stdout);
	};
	if (auto r = replay::serve_replay(*file->replay, options); !r) {
		eprintf("vtice serve-replay: %s\n", r.error().to_string().c_str());
		return kExitFailure;
	}
	return kExitOk;
}

}  // namespace vtice::console
