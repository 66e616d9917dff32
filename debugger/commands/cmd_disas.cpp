#include "commands.hpp"

namespace vtice::dbg {

Result<void> print_instructions(CommandContext &ctx, std::uint64_t address, std::size_t count)
{
	auto insns = ctx.session.disassemble(address, count);
	if (!insns)
		return insns.error();
	auto pc = ctx.session.pc();
	for (const auto &insn : *insns) {
		std::string bytes;
		char hex[4];
		for (unsigned i = 0; i < insn.length; i++) {
			std::snprintf(hex, sizeof(hex), "%02x ", insn.bytes[i]);
			bytes += hex;
		}
		ctx.out.print("%s %s:\t%-30s %s\n", pc && *pc == insn.address ? "=>" : "  ",
			      describe_address(ctx.session, insn.address).c_str(), bytes.c_str(),
			      ctx.session.disassembler().format(insn, ctx.session.symbolizer()).c_str());
	}
	return {};
}

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	std::uint64_t count = 10;
	std::vector<std::string> rest = args;
	if (rest.size() >= 2) {
		auto n = parse_count(rest.back(), "instruction count");
		if (n) {
			count = *n;
			rest.pop_back();
		}
	}
	Result<std::uint64_t> address = rest.empty() ? ctx.session.pc() : ctx.session.resolve_location(join(rest));
	if (!address)
		return address.error();
	return print_instructions(ctx, *address, count);
}

const Command kCmdDisas = {
	"disassemble", {"disas", "u"}, "disassemble [ADDRESS [COUNT]]", "disassemble (default: 10 at pc)",
	"Disassembles COUNT instructions (default 10) at ADDRESS (default pc) in\n"
	"Intel syntax with symbolized targets; '=>' marks the current pc.\n",
	run,
};

}  // namespace vtice::dbg
