#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (!args.empty())
		return usage_error(kCmdDetach);
	if (auto r = ctx.session.detach(); !r)
		return r;
	ctx.out.print("%s\n", ctx.session.detached_line().c_str());
	return {};
}

const Command kCmdDetach = {
	"detach", {".detach", "qd"}, "detach", "remove breakpoints, let the target run, disconnect",
	"Removes every breakpoint and watchpoint, then detaches (D, or D;1 when the\n"
	"stub speaks multiprocess as QEMU does). The guest keeps running. Quitting\n"
	"(quit, the end of a batch file, SIGTERM) does the same.\n",
	run,
};

static Result<void> run_disconnect(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (!args.empty())
		return usage_error(kCmdDisconnect);
	if (auto r = ctx.session.disconnect(); !r)
		return r;
	ctx.out.print("Disconnected; breakpoints removed, the target stays stopped.\n");
	return {};
}

const Command kCmdDisconnect = {
	"disconnect", {}, "disconnect", "remove breakpoints and disconnect, leaving the target stopped",
	"Removes every breakpoint and watchpoint and ends the session without\n"
	"letting the target run: the next debugger to connect (gdb, another vtice)\n"
	"finds it stopped where it is. Quitting, or the end of a batch file,\n"
	"detaches instead.\n",
	run_disconnect,
};

}  // namespace vtice::dbg
