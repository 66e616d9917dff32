#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (!args.empty())
		return usage_error(kCmdDetach);
	if (auto r = ctx.session.detach(); !r)
		return r;
	ctx.out.print("Detached; breakpoints removed, the target runs on.\n");
	return {};
}

const Command kCmdDetach = {
	"detach", {".detach", "qd"}, "detach", "remove breakpoints, let the target run, disconnect",
	"Removes every breakpoint and watchpoint, then detaches (D, or D;1 when the\n"
	"stub speaks multiprocess as QEMU does). The guest keeps running.\n",
	run,
};

}  // namespace vtice::dbg
