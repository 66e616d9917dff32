#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (!args.empty()) {
		std::size_t consumed = 0;
		const Command *c = find_command(args, consumed);
		if (!c)
			return make_error("no command named '" + join(args) + "'");
		ctx.out.print("usage: %s\n", c->usage);
		if (!c->aliases.empty()) {
			std::string aliases;
			for (const char *a : c->aliases)
				aliases += std::string(aliases.empty() ? "" : ", ") + a;
			ctx.out.print("aliases: %s\n", aliases.c_str());
		}
		ctx.out.print("\n%s", c->help);
		return {};
	}
	for (const Command &c : command_table()) {
		std::string aliases;
		for (const char *a : c.aliases)
			aliases += std::string(aliases.empty() ? " (" : ", ") + a;
		if (!aliases.empty())
			aliases += ")";
		ctx.out.print("  %-18s %s%s\n", c.name, c.summary, aliases.c_str());
	}
	ctx.out.print("\nType 'help COMMAND' for details.\n");
	return {};
}

const Command kCmdHelp = {
	"help", {"h", ".help"}, "help [COMMAND]", "list commands, or explain one",
	"Without an argument lists every command with its aliases; with one, prints\n"
	"its usage and full help.\n",
	run,
};

}  // namespace vtice::dbg
