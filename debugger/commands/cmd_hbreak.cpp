#include "commands.hpp"

namespace vtice::dbg {

Result<void> add_breakpoint_command(CommandContext &ctx, const std::vector<std::string> &args, BreakKind type,
				    bool temporary, const Command &self);

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	return add_breakpoint_command(ctx, args, BreakKind::Hardware, false, kCmdHbreak);
}

const Command kCmdHbreak = {
	"hbreak", {"ba"}, "hbreak LOCATION [if CONDITION]", "set a hardware (debug register) breakpoint",
	"Like 'break', but uses a debug register (the stub's Z1): nothing is written\n"
	"into guest memory, so code that checksums itself does not see it. x86 has\n"
	"four debug registers, shared with watchpoints.\n",
	run,
};

}  // namespace vtice::dbg
