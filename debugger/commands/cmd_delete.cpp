#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	std::vector<int> ids;
	if (args.empty() || args[0] == "*")
		for (const auto &bp : ctx.session.breakpoints())
			ids.push_back(bp.id);
	for (const auto &a : args) {
		if (a == "*")
			continue;
		auto id = parse_breakpoint_number(a);
		if (!id)
			return id.error();
		ids.push_back(*id);
	}
	for (int id : ids)
		if (auto r = ctx.session.delete_breakpoint(id); !r)
			return r;
	return {};
}

const Command kCmdDelete = {
	"delete", {"d", "bc"}, "delete [N...|*]", "delete breakpoints (all when none given)",
	"Deletes the numbered breakpoints and watchpoints, or all of them.\n",
	run,
};

}  // namespace vtice::dbg
