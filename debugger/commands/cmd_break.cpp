#include "commands.hpp"

namespace vtice::dbg {

// A name several symbols share (a static function in many files): say so,
// list them, and how to pick another, rather than choosing one silently.
static void note_other_copies(CommandContext &ctx, const std::string &location)
{
	const SymbolSource *symbols = ctx.session.symbols();
	if (!symbols || location.find_first_of("*#+-()[] ") != std::string::npos)
		return;
	auto all = symbols->lookup_all(location);
	if (all.size() < 2)
		return;
	ctx.out.print("note: '%s' names %zu symbols; this breakpoint is on #1. `break %s#N` picks another:\n",
		      location.c_str(), all.size(), location.c_str());
	for (std::size_t i = 0; i < all.size() && i < 16; i++)
		ctx.out.print("  #%zu 0x%016llx\n", i + 1, static_cast<unsigned long long>(all[i]));
	if (all.size() > 16)
		ctx.out.print("  ... %zu more\n", all.size() - 16);
}

// Shared by break, hbreak and tbreak: "LOCATION [if CONDITION]".
Result<void> add_breakpoint_command(CommandContext &ctx, const std::vector<std::string> &args, BreakKind type,
				    bool temporary, const Command &self)
{
	if (args.empty())
		return usage_error(self);
	BreakpointSpec spec;
	spec.type = type;
	spec.temporary = temporary;
	std::size_t i = 0;
	for (; i < args.size() && args[i] != "if"; i++)
		spec.location += (i ? " " : "") + args[i];
	if (i < args.size()) {
		spec.condition = join(args, i + 1);
		if (spec.condition.empty())
			return make_error("'if' without a condition");
	}
	auto id = ctx.session.add_breakpoint(spec);
	if (!id)
		return id.error();
	note_other_copies(ctx, spec.location);
	const Breakpoint &bp = ctx.session.breakpoints().back();
	ctx.out.print("%s %d at %s%s%s\n", temporary ? "Temporary breakpoint" :
			type == BreakKind::Hardware ? "Hardware assisted breakpoint" : "Breakpoint",
		      *id, describe_address(ctx.session, bp.address).c_str(),
		      spec.condition.empty() ? "" : " if ", spec.condition.c_str());
	return {};
}

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	return add_breakpoint_command(ctx, args, BreakKind::Software, false, kCmdBreak);
}

const Command kCmdBreak = {
	"break", {"b", "bp"}, "break LOCATION [if CONDITION]", "set a software breakpoint",
	"Sets a software breakpoint (the stub's Z0) at LOCATION: a symbol\n"
	"(do_sys_openat2; a loaded module's too, its symbols read through the target),\n"
	"symbol+offset (vfs_open+0x10), an address (0xffffffff81364630\n"
	"or *0xffffffff81364630), or an expression. With 'if CONDITION' the target\n"
	"only stops when the expression is non-zero, e.g.\n"
	"  break do_sys_openat2 if $rdi == 0xffffff9c && *(u32*)$rsi != 0\n"
	"Registers are $rax..$r15, $rip, $eflags, $cr3; *(u8*)..*(u64*) read memory.\n",
	run,
};

}  // namespace vtice::dbg
