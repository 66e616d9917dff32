#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (args.empty())
		return usage_error(kCmdMonitor);
	auto output = ctx.session.target().monitor(join(args));
	if (!output)
		return output.error();
	ctx.out.write(*output);
	if (!output->empty() && output->back() != '\n')
		ctx.out.write("\n");
	return {};
}

const Command kCmdMonitor = {
	"monitor", {"qemu"}, "monitor COMMAND", "send a command to the stub's monitor (qRcmd)",
	"Passes COMMAND to the stub (QEMU: its HMP monitor, e.g. 'monitor info\n"
	"registers', 'monitor info mem') and prints what it answers.\n",
	run,
};

}  // namespace vtice::dbg
