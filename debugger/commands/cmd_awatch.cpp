#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	return add_watchpoint_command(ctx, args, BreakKind::AccessWatch, kCmdAwatch);
}

const Command kCmdAwatch = {
	"awatch", {}, "awatch [-lN] ADDRESS-EXPRESSION [if CONDITION]", "stop when memory is read or written",
	"'watch' for reads and writes (the stub's Z4): N bytes (-l1, -l2, -l4, -l8;\n"
	"default 8) at the address the expression gives, with an optional\n"
	"'if CONDITION'.\n",
	run,
};

}  // namespace vtice::dbg
