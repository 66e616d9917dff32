#include "commands.hpp"

namespace vtice::dbg {

// gdb's lines under a breakpoint: what ignore and commands set.
static void print_actions(CommandContext &ctx, const Breakpoint &bp)
{
	if (bp.ignore_count == 1)
		ctx.out.print("\tWill ignore next crossing of breakpoint.\n");
	else if (bp.ignore_count > 1)
		ctx.out.print("\tWill ignore next %u crossings of breakpoint.\n", bp.ignore_count);
	for (const auto &line : bp.commands)
		ctx.out.print("        %s\n", line.c_str());
}

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &)
{
	const auto &bps = ctx.session.breakpoints();
	if (bps.empty()) {
		ctx.out.print("No breakpoints or watchpoints.\n");
		return {};
	}
	ctx.out.print("Num  Type             Disp Enb Address             Hits What\n");
	for (const auto &bp : bps) {
		ctx.out.print("%-4d %-16s %-4s %-3s 0x%016llx %4u %s%s%s\n", bp.id, break_kind_name(bp.spec.type),
			      bp.spec.temporary ? "del" : "keep", bp.enabled ? "y" : "n",
			      static_cast<unsigned long long>(bp.address), bp.hits,
			      format_address(bp.address, ctx.session.symbolizer()).c_str(),
			      bp.spec.condition.empty() ? "" : " if ", bp.spec.condition.c_str());
		print_actions(ctx, bp);
	}
	return {};
}

const Command kCmdInfoBreakpoints = {
	"info breakpoints", {"bl", "i b", "info b"}, "info breakpoints", "list breakpoints and watchpoints",
	"Lists breakpoints and watchpoints with their number, kind, address, hit\n"
	"count and condition; under each, the crossings its ignore count still\n"
	"passes and its command list.\n",
	run,
};

}  // namespace vtice::dbg
