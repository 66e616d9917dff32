#include <cstdlib>

#include "commands.hpp"

namespace vtice::dbg {

std::string describe_address(Session &session, std::uint64_t address)
{
	char text[32];
	std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(address));
	auto sym = session.symbols() ? session.symbols()->symbolize(address) : std::nullopt;
	if (!sym)
		return text;
	return std::string(text) + " <" + format_address(address, session.symbolizer()) + ">";
}

void print_pc_line(CommandContext &ctx)
{
	auto pc = ctx.session.pc();
	if (!pc)
		return;
	auto insns = ctx.session.disassemble(*pc, 1);
	std::string text = insns ? ctx.session.disassembler().format(insns->front(), ctx.session.symbolizer())
				 : "(cannot read code)";
	ctx.out.print("=> %s:\t%s\n", describe_address(ctx.session, *pc).c_str(), text.c_str());
}

void print_stop(CommandContext &ctx, const StopInfo &stop)
{
	ctx.reported_stop = stop;
	if (is_silent(stop.commands))
		return;
	ctx.out.print("%s\n", stop.describe(ctx.session.symbolizer()).c_str());
	if (ctx.session.state() == SessionState::Stopped)
		print_pc_line(ctx);
}

Result<std::uint64_t> parse_count(const std::string &text, const char *what)
{
	char *end = nullptr;
	unsigned long long v = std::strtoull(text.c_str(), &end, 0);
	if (text.empty() || *end || v == 0 || v > 1000000)
		return make_error(std::string(what) + " '" + text + "' is not a count between 1 and 1000000");
	return v;
}

Result<std::uint64_t> optional_count(const std::vector<std::string> &args, const Command &command)
{
	if (args.size() > 1)
		return usage_error(command);
	if (args.empty())
		return std::uint64_t(1);
	return parse_count(args[0], "count");
}

Result<int> parse_breakpoint_number(const std::string &text)
{
	char *end = nullptr;
	long id = std::strtol(text.c_str(), &end, 10);
	if (text.empty() || *end || id <= 0 || id > 1000000000)
		return make_error("'" + text + "' is not a breakpoint number");
	return static_cast<int>(id);
}

std::string join(const std::vector<std::string> &words, std::size_t from)
{
	std::string out;
	for (std::size_t i = from; i < words.size(); i++)
		out += (i > from ? " " : "") + words[i];
	return out;
}

Error usage_error(const Command &command)
{
	return make_error(std::string("usage: ") + command.usage);
}

}  // namespace vtice::dbg
