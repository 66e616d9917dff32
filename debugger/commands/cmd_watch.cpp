#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	BreakpointSpec spec;
	spec.type = BreakKind::WriteWatch;
	spec.length = 8;
	std::vector<std::string> rest;
	for (const auto &a : args) {
		if (a == "-r")
			spec.type = BreakKind::ReadWatch;
		else if (a == "-a")
			spec.type = BreakKind::AccessWatch;
		else if (a.rfind("-l", 0) == 0 && a.size() > 2) {
			auto n = parse_count(a.substr(2), "length");
			if (!n || (*n != 1 && *n != 2 && *n != 4 && *n != 8))
				return make_error("watch length must be 1, 2, 4 or 8 bytes");
			spec.length = static_cast<unsigned>(*n);
		} else
			rest.push_back(a);
	}
	if (rest.empty())
		return usage_error(kCmdWatch);
	spec.location = join(rest);
	auto id = ctx.session.add_breakpoint(spec);
	if (!id)
		return id.error();
	const Breakpoint &bp = ctx.session.breakpoints().back();
	ctx.out.print("%s %d: %s (%u bytes)\n", spec.type == BreakKind::WriteWatch ? "Hardware watchpoint" :
			spec.type == BreakKind::ReadWatch ? "Hardware read watchpoint" : "Hardware access watchpoint",
		      *id, describe_address(ctx.session, bp.address).c_str(), spec.length);
	return {};
}

const Command kCmdWatch = {
	"watch", {"rwatch", "awatch"}, "watch [-r|-a] [-lN] ADDRESS-EXPRESSION", "stop when memory is written (or read)",
	"Sets a hardware watchpoint (the stub's Z2; -r: reads, Z3; -a: any access,\n"
	"Z4) on N bytes (-l1, -l2, -l4, -l8; default 8) at the address the\n"
	"expression gives, e.g. 'watch -l4 jiffies' or 'watch $rdi+0x10'.\n",
	run,
};

}  // namespace vtice::dbg
