// The one table of console commands; each entry is defined in its own file.
#include <array>
#include <cstdint>
#include <cstring>

#include "command.hpp"
#include "commands.hpp"
#include "vtice/interrupts.hpp"

namespace vtice::dbg {

namespace {

const std::array<const Command *, 28> kTable = {
	&kCmdBreak, &kCmdHbreak, &kCmdTbreak, &kCmdWatch, &kCmdRwatch, &kCmdAwatch, &kCmdDelete, &kCmdInfoBreakpoints,
	&kCmdCondition, &kCmdIgnore, &kCmdCommands,
	&kCmdContinue, &kCmdStep, &kCmdNext, &kCmdFinish, &kCmdInfoRegisters, &kCmdSet,
	&kCmdExamine, &kCmdDump, &kCmdDisas, &kCmdBacktrace, &kCmdPrint, &kCmdInfoSymbol,
	&kCmdTranslate, &kCmdMonitor, &kCmdDetach, &kCmdDisconnect, &kCmdHelp,
};

std::vector<const Command *> &registered()
{
	static std::vector<const Command *> commands;
	return commands;
}

std::vector<Command> build()
{
	std::vector<Command> out;
	for (const Command *c : kTable)
		out.push_back(*c);
	for (const Command *c : extra_commands())
		out.push_back(*c);
	for (const Command *c : registered())
		out.push_back(*c);
	return out;
}

// How many words a name or alias consists of ("info registers" = 2).
std::size_t word_count(const char *name)
{
	std::size_t n = 1;
	for (const char *p = name; *p; p++)
		n += *p == ' ';
	return n;
}

bool matches(const char *name, const std::vector<std::string> &words)
{
	std::size_t n = word_count(name);
	if (words.size() < n)
		return false;
	std::string joined = words[0];
	for (std::size_t i = 1; i < n; i++)
		joined += " " + words[i];
	return joined == name;
}

}  // namespace

std::span<const Command> command_table()
{
	static std::vector<Command> table;
	static std::size_t built_with = SIZE_MAX;
	if (built_with != registered().size()) {
		table = build();
		built_with = registered().size();
	}
	return table;
}

void register_command(const Command *command)
{
	for (const Command *c : registered())
		if (c == command)
			return;
	registered().push_back(command);
}

const Command *find_command(const std::vector<std::string> &words, std::size_t &consumed)
{
	const Command *best = nullptr;
	consumed = 0;
	for (const Command &c : command_table()) {
		std::vector<const char *> names = c.aliases;
		names.insert(names.begin(), c.name);
		for (const char *name : names)
			if (matches(name, words) && word_count(name) > consumed) {
				best = &c;
				consumed = word_count(name);
			}
	}
	return best;
}

Result<std::optional<ParsedLine>> parse_line(std::string_view line)
{
	auto words = tokenize(line);
	if (!words)
		return make_error("cannot parse command: " + words.error().to_string());
	if (words->empty())
		return std::optional<ParsedLine>();
	// gdb's "x/8gx ADDR": the format rides on the command word.
	std::string suffix;
	if (auto slash = (*words)[0].find('/'); slash != std::string::npos && slash > 0) {
		suffix = (*words)[0].substr(slash);
		(*words)[0].resize(slash);
	}
	// WinDbg's db/dw/dd/dq name the unit in the command word.
	const std::string &w = (*words)[0];
	if (w.size() == 2 && w[0] == 'd' && std::strchr("bwdq", w[1])) {
		std::string unit = "-" + w.substr(1);
		(*words)[0] = "dump";
		words->insert(words->begin() + 1, unit);
	}
	std::size_t consumed = 0;
	const Command *command = find_command(*words, consumed);
	if (!command)
		return make_error("unknown command '" + (*words)[0] + "' (try 'help')");
	std::vector<std::string> args(words->begin() + static_cast<std::ptrdiff_t>(consumed), words->end());
	if (!suffix.empty())
		args.insert(args.begin(), suffix);
	return std::optional<ParsedLine>(ParsedLine{command, std::move(args)});
}

Result<void> dispatch_line(CommandContext &ctx, std::string_view line)
{
	auto parsed = parse_line(line);
	if (!parsed)
		return parsed.error();
	if (!*parsed)
		return {};
	return (*parsed)->command->run(ctx, (*parsed)->args);
}

Result<void> execute_line(CommandContext &ctx, std::string_view line)
{
	// Ctrl-C from now on, and the time limit, are this command's.
	interrupts::begin_command(ctx.run_timeout_ms);
	ctx.reported_stop.reset();
	if (auto r = dispatch_line(ctx, line); !r)
		return r;
	return run_stop_commands(ctx);
}

}  // namespace vtice::dbg
