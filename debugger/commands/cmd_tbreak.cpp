#include "commands.hpp"

namespace vtice::dbg {

Result<void> add_breakpoint_command(CommandContext &ctx, const std::vector<std::string> &args, BreakKind type,
				    bool temporary, const Command &self);

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	return add_breakpoint_command(ctx, args, BreakKind::Software, true, kCmdTbreak);
}

const Command kCmdTbreak = {
	"tbreak", {}, "tbreak LOCATION [if CONDITION]", "set a breakpoint deleted at its first stop",
	"Like 'break', but the breakpoint is deleted when the target first stops at it.\n",
	run,
};

}  // namespace vtice::dbg
