#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	std::uint64_t max = 32;
	if (args.size() > 1)
		return usage_error(kCmdBacktrace);
	if (args.size() == 1) {
		auto n = parse_count(args[0], "frame count");
		if (!n)
			return n.error();
		max = *n;
	}
	auto frames = ctx.session.backtrace(max);
	if (!frames)
		return frames.error();
	if (!ctx.session.unwinder())
		ctx.out.print("(no ORC tables loaded: frames marked '?' are guesses from a stack scan)\n");
	for (std::size_t i = 0; i < frames->size(); i++) {
		const Frame &f = (*frames)[i];
		ctx.out.print("#%-2zu %s0x%016llx in %s%s%s\n", i, f.reliable ? "" : "? ",
			      static_cast<unsigned long long>(f.pc),
			      format_address(f.pc, ctx.session.symbolizer()).c_str(),
			      f.note == "regs" ? "  [interrupt/syscall frame]" : "",
			      f.note.find("unwind stopped") != std::string::npos ?
				      ("  [" + f.note.substr(f.note.find("unwind stopped"))).c_str() : "");
	}
	return {};
}

const Command kCmdBacktrace = {
	"backtrace", {"bt", "k", "where"}, "backtrace [N]", "show the call stack",
	"Unwinds the current vCPU's kernel stack with the kernel's own ORC tables\n"
	"(read from guest memory at attach), through interrupt and syscall frames,\n"
	"to the user-mode boundary. A frame in a loaded module's text unwinds with\n"
	"that module's own tables, found through the kernel's list of modules and\n"
	"read (once) the first time a stack reaches the module: seconds over a\n"
	"serial line. Where ORC has no data, the rest of the stack is\n"
	"scanned for text addresses, which are printed as '? func+0x12' guesses as\n"
	"the kernel's own oops traces do.\n",
	run,
};

}  // namespace vtice::dbg
