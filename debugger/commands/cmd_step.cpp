#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	auto count = optional_count(args, kCmdStep);
	if (!count)
		return count.error();
	for (std::uint64_t i = 0; i < *count; i++) {
		auto stop = ctx.session.step_instruction();
		if (!stop)
			return stop.error();
		if (stop->event.reason != StopReason::Signal || i + 1 == *count) {
			if (stop->event.reason != StopReason::Signal)
				ctx.out.print("%s\n", stop->describe(ctx.session.symbolizer()).c_str());
			break;
		}
	}
	print_pc_line(ctx);
	return {};
}

const Command kCmdStep = {
	"stepi", {"step", "s", "si", "t"}, "stepi [N]", "execute one instruction (into calls)",
	"Executes N (default 1) instructions on the current vCPU, entering calls.\n"
	"Kernel code has no source lines here, so 'step' is 'stepi'. Interrupts\n"
	"are held off while stepping (QEMU's default).\n",
	run,
};

}  // namespace vtice::dbg
