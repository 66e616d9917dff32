#include <cstdlib>

#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (args.size() != 1)
		return usage_error(kCmdThread);
	char *end = nullptr;
	long id = std::strtol(args[0].c_str(), &end, 10);
	if (args[0].empty() || *end || id <= 0)
		return make_error("'" + args[0] + "' is not a thread number (see info threads)");
	if (auto r = ctx.session.target().select_thread(static_cast<int>(id)); !r)
		return r;
	ctx.session.invalidate_registers();
	ctx.out.print("[Switching to thread %ld (vCPU %ld)]\n", id, id - 1);
	print_pc_line(ctx);
	return {};
}

const Command kCmdThread = {
	"thread", {"~s"}, "thread N", "select the vCPU whose registers and memory view are used",
	"Selects thread N (QEMU: vCPU N-1) for registers, memory (its page tables)\n"
	"and stepping.\n",
	run,
};

}  // namespace vtice::dbg
