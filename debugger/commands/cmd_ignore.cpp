#include <climits>
#include <cstdlib>

#include "commands.hpp"

namespace vtice::dbg {

static Result<unsigned> parse_ignore_count(const std::string &text)
{
	char *end = nullptr;
	unsigned long long count = std::strtoull(text.c_str(), &end, 0);
	if (text.empty() || text[0] == '-' || *end || count > UINT_MAX)
		return make_error("ignore count '" + text + "' is not a number between 0 and " + std::to_string(UINT_MAX));
	return static_cast<unsigned>(count);
}

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (args.size() != 2)
		return usage_error(kCmdIgnore);
	auto id = parse_breakpoint_number(args[0]);
	if (!id)
		return id.error();
	auto count = parse_ignore_count(args[1]);
	if (!count)
		return count.error();
	if (auto r = ctx.session.set_ignore_count(*id, *count); !r)
		return r;
	if (*count == 0)
		ctx.out.print("Will stop next time breakpoint %d is reached.\n", *id);
	else if (*count == 1)
		ctx.out.print("Will ignore next crossing of breakpoint %d.\n", *id);
	else
		ctx.out.print("Will ignore next %u crossings of breakpoint %d.\n", *count, *id);
	return {};
}

const Command kCmdIgnore = {
	"ignore", {}, "ignore N COUNT", "pass the next COUNT hits of breakpoint N",
	"The next COUNT times breakpoint or watchpoint N is reached with its\n"
	"condition true, the target goes on without stopping. Those crossings count\n"
	"as hits; 'info breakpoints' shows how many are still to pass. 'ignore N 0'\n"
	"makes N stop at its next hit.\n",
	run,
};

}  // namespace vtice::dbg
