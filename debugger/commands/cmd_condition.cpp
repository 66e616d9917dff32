#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (args.empty())
		return usage_error(kCmdCondition);
	auto id = parse_breakpoint_number(args[0]);
	if (!id)
		return id.error();
	std::string condition = join(args, 1);
	if (auto r = ctx.session.set_condition(*id, condition); !r)
		return r;
	if (condition.empty())
		ctx.out.print("Breakpoint %d now unconditional.\n", *id);
	return {};
}

const Command kCmdCondition = {
	"condition", {}, "condition N [EXPRESSION]", "set or clear the condition of breakpoint N",
	"Breakpoint or watchpoint N stops the target only when EXPRESSION is\n"
	"non-zero, as with 'break LOCATION if EXPRESSION'. The expression is checked\n"
	"now (syntax, register and symbol names); a bad one is refused and the old\n"
	"condition stays. Without EXPRESSION, N stops at every hit again.\n"
	"  condition 2 $rdi == 0xffffff9c\n"
	"  condition 2\n",
	run,
};

}  // namespace vtice::dbg
