// Reverse execution on a target that can run backwards: vtice serve-replay
// (a recording made with trace --record), or any stub with ReverseStep+.
#include "commands.hpp"

namespace vtice::dbg {

static Result<void> reverse_stepi(CommandContext &ctx, const std::vector<std::string> &args)
{
	auto count = optional_count(args, kCmdReverseStepi);
	if (!count)
		return count.error();
	for (std::uint64_t i = 0; i < *count; i++) {
		auto stop = ctx.session.reverse_step();
		if (!stop)
			return stop.error();
		if (stop->event.reason != StopReason::Signal || !stop->event.replay_log.empty()) {
			ctx.out.print("%s\n", stop->describe(ctx.session.symbolizer()).c_str());
			break;
		}
	}
	print_pc_line(ctx);
	return {};
}

static Result<void> reverse_nexti(CommandContext &ctx, const std::vector<std::string> &args)
{
	auto count = optional_count(args, kCmdReverseNexti);
	if (!count)
		return count.error();
	for (std::uint64_t i = 0; i < *count; i++) {
		auto stop = ctx.session.reverse_next(ctx.run_timeout_ms);
		if (!stop)
			return stop.error();
		if (stop->breakpoint || stop->event.reason != StopReason::Signal || !stop->event.replay_log.empty()) {
			print_stop(ctx, *stop);
			return {};
		}
	}
	print_pc_line(ctx);
	return {};
}

static Result<void> reverse_continue(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (!args.empty())
		return usage_error(kCmdReverseContinue);
	ctx.out.print("Continuing backwards.\n");
	auto stop = ctx.session.reverse_cont(ctx.run_timeout_ms);
	if (!stop)
		return stop.error();
	print_stop(ctx, *stop);
	return {};
}

static Result<void> reverse_finish(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (!args.empty())
		return usage_error(kCmdReverseFinish);
	auto stop = ctx.session.reverse_finish(ctx.run_timeout_ms);
	if (!stop)
		return stop.error();
	if (stop->breakpoint || !stop->event.replay_log.empty() || stop->event.reason != StopReason::Signal)
		print_stop(ctx, *stop);
	else {
		ctx.out.print("Run back to the call\n");
		print_pc_line(ctx);
	}
	return {};
}

const Command kCmdReverseStepi = {
	"reverse-stepi", {"rsi", "reverse-step"}, "reverse-stepi [N]", "go back N instructions (a replay)",
	"Undoes N (default 1) instructions on a target that runs backwards: vtice\n"
	"serve-replay over a recording made with 'trace --record -o FILE'. At the\n"
	"start of the recording it stops with \"No more reverse-execution history\".\n",
	reverse_stepi,
};

const Command kCmdReverseNexti = {
	"reverse-nexti", {"rni"}, "reverse-nexti [N]", "go back N instructions, calls undone whole (a replay)",
	"Like reverse-stepi, but where the instruction before is a call that has\n"
	"returned, goes back onto that call in one move instead of into the\n"
	"callee's last instruction (through tail calls too). In the TUI: Shift-F10.\n",
	reverse_nexti,
};

const Command kCmdReverseContinue = {
	"reverse-continue", {"rc"}, "reverse-continue", "run backwards to a breakpoint or watchpoint (a replay)",
	"Runs backwards until a breakpoint, a watchpoint (stopping at the instruction\n"
	"that made the access) or the start of the recording.\n",
	reverse_continue,
};

const Command kCmdReverseFinish = {
	"reverse-finish", {}, "reverse-finish", "back to the call that entered this function (a replay)",
	"Runs backwards to this function's entry in this frame (its symbol's start,\n"
	"with the stack pointer the unwinder says it had there), then one step more,\n"
	"onto the call instruction in the caller.\n",
	reverse_finish,
};

}  // namespace vtice::dbg
