#include "commands.hpp"

namespace vtice::dbg {

static void print_register(CommandContext &ctx, const RegisterView &r)
{
	std::string extra;
	if (r.info->type == "code_ptr" || r.info->type == "data_ptr") {
		auto sym = ctx.session.symbols() ? ctx.session.symbols()->symbolize(r.value) : std::nullopt;
		if (sym)
			extra = "<" + format_address(r.value, ctx.session.symbolizer()) + ">";
	} else if (r.info->bits <= 64 && r.info->group == "general") {
		extra = std::to_string(static_cast<long long>(r.value));
	}
	ctx.out.print("%-14s 0x%-18llx %s%s\n", r.info->name.c_str(), static_cast<unsigned long long>(r.value),
		      extra.c_str(), r.changed ? "  *" : "");
}

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	// WinDbg's "r rax=5" sets a register.
	if (args.size() == 1 && args[0].find('=') != std::string::npos) {
		auto eq = args[0].find('=');
		auto value = ctx.session.evaluate(args[0].substr(eq + 1));
		if (!value)
			return value.error();
		return ctx.session.set_register(args[0].substr(0, eq), *value);
	}
	auto regs = ctx.session.registers();
	if (!regs)
		return regs.error();
	for (const auto &r : *regs) {
		if (!args.empty()) {
			bool wanted = false;
			for (const auto &a : args)
				wanted = wanted || a == r.info->name || (a.size() > 1 && a[0] == '$' && a.substr(1) == r.info->name);
			if (!wanted)
				continue;
		} else if (r.info->group == "vector" || r.info->group == "float") {
			continue;
		}
		print_register(ctx, r);
	}
	return {};
}

const Command kCmdInfoRegisters = {
	"info registers", {"r", "i r", "info reg", "registers"}, "info registers [NAME...] | r NAME=VALUE",
	"show (or set) registers; '*' marks those changed since the last stop",
	"Prints the registers of the current vCPU as the target describes them\n"
	"(general, segment, control registers, efer). A '*' marks a register that\n"
	"changed since the previous stop. 'r rax=0x10' sets one.\n",
	run,
};

}  // namespace vtice::dbg
