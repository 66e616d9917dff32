#include "../task.hpp"
#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (!args.empty())
		return usage_error(kCmdInfoTask);
	TaskInspector tasks(ctx.session);
	auto task = tasks.current_task();
	if (!task)
		return task.error();
	auto comm = tasks.comm(*task);
	if (!comm)
		return comm.error();
	ctx.out.print("task 0x%llx comm \"%s\" on vCPU %d (comm offset: %s)\n", static_cast<unsigned long long>(*task),
		      comm->c_str(), ctx.session.target().selected_thread(), tasks.comm_source().c_str());
	return {};
}

const Command kCmdInfoTask = {
	"info task", {"!thread"}, "info task", "show the task running on the current vCPU",
	"Prints the current task_struct (per-cpu current_task through gs_base) and\n"
	"its comm. The comm's offset comes from the kernel's BTF once ptype, offsetof\n"
	"or a typed print has loaded it, else from scanning init_task for\n"
	"\"swapper/0\"; the line says which.\n",
	run,
};

}  // namespace vtice::dbg
