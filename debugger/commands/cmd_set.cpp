#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	// "set $rax = EXPR" or "set *(u32*)ADDR = EXPR"
	std::string text = join(args);
	auto eq = text.find('=');
	if (eq == std::string::npos || eq == 0 || (eq + 1 < text.size() && text[eq + 1] == '='))
		return usage_error(kCmdSet);
	std::string lhs = text.substr(0, eq);
	while (!lhs.empty() && lhs.back() == ' ')
		lhs.pop_back();
	auto value = ctx.session.evaluate(text.substr(eq + 1));
	if (!value)
		return value.error();
	if (!lhs.empty() && lhs[0] == '$')
		return ctx.session.set_register(lhs.substr(1), *value);
	unsigned size = 8;
	std::string target = lhs;
	for (auto [cast, bytes] : {std::pair{"*(u8*)", 1u}, {"*(u16*)", 2u}, {"*(u32*)", 4u}, {"*(u64*)", 8u}})
		if (lhs.rfind(cast, 0) == 0) {
			size = bytes;
			target = lhs.substr(std::string(cast).size());
		}
	if (target == lhs) {
		if (lhs.empty() || lhs[0] != '*')
			return make_error("can only assign to $register or *(uN*)address");
		target = lhs.substr(1);
	}
	auto address = ctx.session.evaluate(target);
	if (!address)
		return address.error();
	std::vector<std::uint8_t> bytes(size);
	for (unsigned i = 0; i < size; i++)
		bytes[i] = static_cast<std::uint8_t>(*value >> (8 * i));
	return ctx.session.write_memory(*address, bytes);
}

const Command kCmdSet = {
	"set", {"set var"}, "set $REG = EXPR | set *(u32*)ADDR = EXPR", "write a register or memory",
	"Writes a register ('set $rax = 0') or memory ('set *(u8*)0xffff... = 0x90',\n"
	"plain '*ADDR' writes 8 bytes).\n",
	run,
};

}  // namespace vtice::dbg
