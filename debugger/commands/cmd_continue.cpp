#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (!args.empty())
		return usage_error(kCmdContinue);
	ctx.out.print("Continuing.\n");
	auto stop = ctx.session.cont(ctx.run_timeout_ms);
	if (!stop)
		return stop.error();
	print_stop(ctx, *stop);
	return {};
}

const Command kCmdContinue = {
	"continue", {"c", "g", "cont"}, "continue", "run until a breakpoint, watchpoint or interrupt",
	"Resumes all vCPUs. If the current instruction has a breakpoint, it is\n"
	"stepped over first (QEMU would report it again otherwise). Breakpoints\n"
	"whose condition is false are passed silently. In batch mode the wait is\n"
	"bounded by --timeout.\n",
	run,
};

}  // namespace vtice::dbg
