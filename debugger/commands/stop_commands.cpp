// Breakpoint command lists ("commands N"), run after the stop that a command
// reported. A list that resumes the target ends there, as in gdb ("any other
// commands in the command list, after a command that resumes execution, are
// ignored"), and the list of the stop it leads to runs next in the same loop:
// a "silent / print $rdi / continue" list on a hot breakpoint runs for as
// long as the target keeps hitting it, and the stack does not grow per hit.
#include "commands.hpp"

namespace vtice::dbg {

namespace {

// Runs one list; stops early when a line ran the target.
Result<void> run_list(CommandContext &ctx, int breakpoint, const std::vector<std::string> &lines)
{
	for (std::size_t i = is_silent(lines) ? 1 : 0; i < lines.size(); i++) {
		std::uint64_t stops = ctx.session.stop_count();
		if (auto r = dispatch_line(ctx, lines[i]); !r)
			return make_error("breakpoint " + std::to_string(breakpoint) + " command '" + lines[i] +
					  "': " + r.error().to_string());
		if (ctx.session.stop_count() != stops)
			return {};
	}
	return {};
}

}  // namespace

bool is_silent(const std::vector<std::string> &commands)
{
	return !commands.empty() && commands.front() == "silent";
}

Result<void> run_stop_commands(CommandContext &ctx)
{
	while (ctx.reported_stop && ctx.reported_stop->breakpoint && !ctx.reported_stop->commands.empty()) {
		int breakpoint = *ctx.reported_stop->breakpoint;
		std::vector<std::string> lines = std::move(ctx.reported_stop->commands);
		ctx.reported_stop.reset();
		if (auto r = run_list(ctx, breakpoint, lines); !r)
			return r;
	}
	return {};
}

}  // namespace vtice::dbg
