#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (args.empty())
		return usage_error(kCmdPrint);
	std::string text = join(args);
	bool hex_only = false;
	if (text.rfind("/x ", 0) == 0) {
		hex_only = true;
		text = text.substr(3);
	}
	auto value = ctx.session.evaluate(text);
	if (!value)
		return value.error();
	if (hex_only)
		ctx.out.print("0x%llx\n", static_cast<unsigned long long>(*value));
	else
		ctx.out.print("0x%llx (%lld) %s\n", static_cast<unsigned long long>(*value), static_cast<long long>(*value),
			      ctx.session.symbols() && ctx.session.symbols()->symbolize(*value) ?
				      ("<" + format_address(*value, ctx.session.symbolizer()) + ">").c_str() : "");
	return {};
}

const Command kCmdPrint = {
	"print", {"?", "eval"}, "print EXPRESSION", "evaluate an expression",
	"Evaluates an expression ($rax + 8, *(u32*)($rsp+0x10), do_sys_openat2+0x10,\n"
	"$rdi == 0xffffff9c && $rdx & 0x40) and prints it in hex and decimal.\n",
	run,
};

}  // namespace vtice::dbg
