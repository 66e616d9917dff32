#include <cctype>

#include "memory_format.hpp"

namespace vtice::dbg {

namespace {

struct Format {
	std::uint64_t count = 1;
	unsigned size = 8;
	char kind = 'x';  // x: hex, i: instructions
};

Result<Format> parse_format(const std::string &text)
{
	Format f;
	std::size_t i = 1;  // after '/'
	std::string digits;
	while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
		digits.push_back(text[i++]);
	if (!digits.empty()) {
		auto n = parse_count(digits, "count");
		if (!n)
			return n.error();
		f.count = *n;
	}
	for (; i < text.size(); i++) {
		switch (text[i]) {
		case 'b': f.size = 1; break;
		case 'h': f.size = 2; break;
		case 'w': f.size = 4; break;
		case 'g': f.size = 8; break;
		case 'x': f.kind = 'x'; break;
		case 'i': f.kind = 'i'; break;
		default:
			return make_error(std::string("unknown format letter '") + text[i] + "' (use x, i, b, h, w, g)");
		}
	}
	return f;
}

}  // namespace

Result<void> print_instructions(CommandContext &ctx, std::uint64_t address, std::size_t count);

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	Format f;
	std::size_t first = 0;
	if (!args.empty() && args[0][0] == '/') {
		auto parsed = parse_format(args[0]);
		if (!parsed)
			return parsed.error();
		f = *parsed;
		first = 1;
	}
	if (first >= args.size())
		return usage_error(kCmdExamine);
	auto address = ctx.session.resolve_location(join(args, first));
	if (!address)
		return address.error();
	if (f.kind == 'i')
		return print_instructions(ctx, *address, f.count);
	return dump_memory(ctx, *address, f.size, f.count);
}

const Command kCmdExamine = {
	"x", {}, "x/NFU ADDRESS", "examine memory (gdb format: x/8xg, x/16xb, x/4i)",
	"Prints N units of memory at ADDRESS (an expression: symbol, register,\n"
	"*pointer). U is b, h, w or g (1, 2, 4, 8 bytes); F is x (hex) or i\n"
	"(instructions). Virtual addresses of the current vCPU; if the stub cannot\n"
	"read one, the page tables are walked from CR3 over physical reads.\n",
	run,
};

}  // namespace vtice::dbg
