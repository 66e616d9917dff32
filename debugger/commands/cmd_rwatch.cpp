#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	return add_watchpoint_command(ctx, args, BreakKind::ReadWatch, kCmdRwatch);
}

const Command kCmdRwatch = {
	"rwatch", {}, "rwatch [-lN] ADDRESS-EXPRESSION [if CONDITION]", "stop when memory is read",
	"'watch' for reads (the stub's Z3): N bytes (-l1, -l2, -l4, -l8;\n"
	"default 8) at the address the expression gives, with an optional\n"
	"'if CONDITION'.\n",
	run,
};

}  // namespace vtice::dbg
