#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (!args.empty())
		return usage_error(kCmdInfoThreads);
	Target &target = ctx.session.target();
	auto threads = target.threads();
	if (!threads)
		return threads.error();
	int selected = target.selected_thread();
	const RegisterInfo *rip = target.layout().find("rip");
	for (int t : *threads) {
		std::string where = "?";
		if (rip && target.select_thread(t)) {
			if (auto pc = target.read_register(*rip))
				where = describe_address(ctx.session, *pc);
		}
		ctx.out.print("%s %-3d vCPU %-3d %s\n", t == selected ? "*" : " ", t, t - 1, where.c_str());
	}
	if (auto r = target.select_thread(selected > 0 ? selected : 1); !r)
		return r;
	ctx.session.invalidate_registers();
	return {};
}

const Command kCmdInfoThreads = {
	"info threads", {"~", "i th"}, "info threads", "list the vCPUs (RSP threads) and where each is",
	"Lists the stub's threads (QEMU: one per vCPU, numbered from 1) with the pc\n"
	"of each; '*' marks the selected one, whose registers the other commands use.\n",
	run,
};

}  // namespace vtice::dbg
