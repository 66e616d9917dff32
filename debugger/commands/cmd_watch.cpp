#include "commands.hpp"
#include "expr.hpp"

namespace vtice::dbg {

namespace {

const char *watch_name(BreakKind type)
{
	if (type == BreakKind::ReadWatch)
		return "Hardware read watchpoint";
	if (type == BreakKind::AccessWatch)
		return "Hardware access watchpoint";
	return "Hardware watchpoint";
}

// Options, then the address expression, then "if CONDITION".
Result<BreakpointSpec> parse_watch(const std::vector<std::string> &args, BreakKind type)
{
	BreakpointSpec spec;
	spec.type = type;
	spec.length = 8;
	bool length_given = false;
	std::vector<std::string> rest;
	std::size_t i = 0;
	for (; i < args.size() && args[i] != "if"; i++) {
		const std::string &a = args[i];
		if (a == "-r")
			spec.type = BreakKind::ReadWatch;
		else if (a == "-a")
			spec.type = BreakKind::AccessWatch;
		else if (a.rfind("-l", 0) == 0 && a.size() > 2) {
			auto n = parse_count(a.substr(2), "length");
			if (!n || (*n != 1 && *n != 2 && *n != 4 && *n != 8))
				return make_error("watch length must be 1, 2, 4 or 8 bytes");
			spec.length = static_cast<unsigned>(*n);
			length_given = true;
		} else
			rest.push_back(a);
	}
	spec.location = join(rest);
	// gdb's form, "watch *(long *)ADDR": the cast says how many bytes.
	if (!spec.location.empty() && spec.location[0] == '*')
		if (auto cast = integer_pointer_cast(std::string_view(spec.location).substr(1))) {
			if (!length_given)
				spec.length = cast->size;
			spec.location = "*" + spec.location.substr(1 + cast->length);
		}
	if (i < args.size()) {
		spec.condition = join(args, i + 1);
		if (spec.condition.empty())
			return make_error("'if' without a condition");
	}
	return spec;
}

}  // namespace

// Shared by watch, rwatch and awatch; type is the kind without -r/-a.
Result<void> add_watchpoint_command(CommandContext &ctx, const std::vector<std::string> &args, BreakKind type,
				    const Command &self)
{
	auto spec = parse_watch(args, type);
	if (!spec)
		return spec.error();
	if (spec->location.empty())
		return usage_error(self);
	auto id = ctx.session.add_breakpoint(*spec);
	if (!id)
		return id.error();
	const Breakpoint &bp = ctx.session.breakpoints().back();
	ctx.out.print("%s %d: %s (%u bytes)%s%s\n", watch_name(spec->type), *id,
		      describe_address(ctx.session, bp.address).c_str(), spec->length,
		      spec->condition.empty() ? "" : " if ", spec->condition.c_str());
	return {};
}

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	return add_watchpoint_command(ctx, args, BreakKind::WriteWatch, kCmdWatch);
}

const Command kCmdWatch = {
	"watch", {}, "watch [-r|-a] [-lN] ADDRESS-EXPRESSION [if CONDITION]", "stop when memory is written (or read)",
	"Sets a hardware watchpoint (the stub's Z2; -r: reads, Z3; -a: any access,\n"
	"Z4) on N bytes (-l1, -l2, -l4, -l8; default 8) at the address the\n"
	"expression gives, e.g. 'watch -l4 jiffies' or 'watch $rdi+0x10'. With\n"
	"'if CONDITION' the target only stops when the expression is non-zero\n"
	"after the access, e.g. 'watch -l4 jiffies if *(u32*)jiffies % 100 == 0'.\n",
	run,
};

}  // namespace vtice::dbg
