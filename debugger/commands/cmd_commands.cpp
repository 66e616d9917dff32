#include "commands.hpp"

namespace vtice::dbg {

namespace {

std::string trim(const std::string &line)
{
	auto first = line.find_first_not_of(" \t\r");
	if (first == std::string::npos)
		return {};
	return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}

// The lines up to "end", read whatever else is wrong so that the body of a
// refused list is never run as top-level commands.
Result<std::vector<std::string>> read_block(CommandContext &ctx)
{
	if (!ctx.read_line)
		return make_error("commands: no input to read the list from here (use the prompt or a batch file)");
	std::vector<std::string> lines;
	for (;;) {
		auto line = ctx.read_line();
		if (!line)
			return make_error("commands: the input ended before the list's 'end'");
		std::string text = trim(*line);
		if (text == "end")
			return lines;
		if (!text.empty() && text[0] != '#')
			lines.push_back(std::move(text));
	}
}

// Every line must name a command now, not at the first hit.
Result<void> check_block(const std::vector<std::string> &lines)
{
	for (std::size_t i = is_silent(lines) ? 1 : 0; i < lines.size(); i++) {
		auto parsed = parse_line(lines[i]);
		if (!parsed)
			return make_error("commands: '" + lines[i] + "': " + parsed.error().to_string());
		// The table holds copies of the entries: compare what they run.
		if (*parsed && (*parsed)->command->run == kCmdCommands.run)
			return make_error("commands: a command list cannot contain 'commands'");
	}
	return {};
}

Result<int> target_breakpoint(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (args.size() > 1)
		return usage_error(kCmdCommands);
	if (args.size() == 1)
		return parse_breakpoint_number(args[0]);
	auto last = ctx.session.last_created_breakpoint();
	if (!last)
		return make_error("commands: no breakpoint has been set yet");
	return *last;
}

}  // namespace

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	auto id = target_breakpoint(ctx, args);
	auto lines = read_block(ctx);
	if (!id)
		return id.error();
	if (!lines)
		return lines.error();
	if (auto r = check_block(*lines); !r)
		return r;
	return ctx.session.set_commands(*id, std::move(*lines));
}

const Command kCmdCommands = {
	"commands", {}, "commands [N]  (then one command per line, then 'end')",
	"run commands when breakpoint N stops the target",
	"Reads console commands, one per line, up to a line saying 'end': from the\n"
	"batch file, or at the '>' prompt. They run each time breakpoint or\n"
	"watchpoint N (default: the one set last) stops the target. A first line\n"
	"'silent' drops the usual stop report. A command that runs the target\n"
	"(continue, stepi, ...) ends the list; when the target then stops at a\n"
	"breakpoint with a list, that list runs next. An empty list removes N's\n"
	"commands. Example, printing each openat's flags without stopping:\n"
	"  break do_sys_openat2\n"
	"  commands\n"
	"  silent\n"
	"  print *(u64*)$rdx\n"
	"  continue\n"
	"  end\n",
	run,
};

}  // namespace vtice::dbg
