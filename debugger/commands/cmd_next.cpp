#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	auto count = optional_count(args, kCmdNext);
	if (!count)
		return count.error();
	for (std::uint64_t i = 0; i < *count; i++) {
		auto stop = ctx.session.step_over();
		if (!stop)
			return stop.error();
		if (stop->breakpoint || stop->event.reason == StopReason::Watchpoint) {
			print_stop(ctx, *stop);
			return {};
		}
	}
	print_pc_line(ctx);
	return {};
}

const Command kCmdNext = {
	"nexti", {"next", "n", "ni", "p"}, "nexti [N]", "execute one instruction, stepping over calls",
	"Like stepi, but a call runs to its return: a temporary breakpoint at the\n"
	"return address, taken only when the stack is back at this frame (so\n"
	"recursion does not stop it early). Other breakpoints still stop.\n",
	run,
};

}  // namespace vtice::dbg
