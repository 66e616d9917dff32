#include "../btf/btf_source.hpp"
#include "../btf/typed_expr.hpp"
#include "commands.hpp"

namespace vtice::dbg {

// Struct casts, ->, $current: evaluated over the kernel's BTF.
static Result<void> print_typed(CommandContext &ctx, const std::string &text)
{
	auto types = ctx.session.kernel_types().get(ctx.session, ctx.out);
	if (!types)
		return types.error();
	auto value = btf::evaluate_typed(text, **types, ctx.session);
	if (!value)
		return value.error();
	auto shown = btf::render(*value, **types, ctx.session);
	if (!shown)
		return shown.error();
	ctx.out.print("%s\n", shown->c_str());
	return {};
}

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
	if (!hex_only && btf::looks_typed(text))
		return print_typed(ctx, text);
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
	"$rdi == 0xffffff9c && $rdx & 0x40) and prints it in hex and decimal.\n"
	"With the kernel's types (BTF; see ptype): *(struct file *)$rdi prints the\n"
	"object, ((struct task_struct *)ADDR)->pid one member, $current->comm the\n"
	"running task's name; ->, . and [N] chain. A cast's operand runs to its\n"
	"closing parenthesis, as a cast binds looser than -> in C.\n",
	run,
};

}  // namespace vtice::dbg
