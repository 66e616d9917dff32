#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (!args.empty())
		return usage_error(kCmdFinish);
	auto stop = ctx.session.step_out(ctx.run_timeout_ms);
	if (!stop)
		return stop.error();
	if (stop->breakpoint)
		print_stop(ctx, *stop);
	else {
		ctx.out.print("Run till exit\n");
		print_pc_line(ctx);
	}
	auto rax = ctx.session.register_value("rax");
	if (rax)
		ctx.out.print("Value returned: rax = 0x%llx (%lld)\n", static_cast<unsigned long long>(*rax),
			      static_cast<long long>(*rax));
	return {};
}

const Command kCmdFinish = {
	"finish", {"gu"}, "finish", "run until the current function returns",
	"Finds the caller's frame with the unwinder (ORC), then runs to its return\n"
	"address with the stack back above this frame, and prints rax.\n",
	run,
};

}  // namespace vtice::dbg
