#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (args.empty())
		return usage_error(kCmdInfoSymbol);
	if (!ctx.session.symbols())
		return make_error("no symbols loaded");
	auto address = ctx.session.resolve_location(join(args));
	if (!address)
		return address.error();
	auto hit = ctx.session.symbols()->symbolize(*address);
	if (!hit) {
		ctx.out.print("No symbol matches 0x%llx.\n", static_cast<unsigned long long>(*address));
		return {};
	}
	ctx.out.print("%s + %llu (0x%llx) = 0x%llx\n", hit->name.c_str(), static_cast<unsigned long long>(hit->offset),
		      static_cast<unsigned long long>(hit->offset), static_cast<unsigned long long>(*address));
	return {};
}

const Command kCmdInfoSymbol = {
	"info symbol", {"ln", "i s"}, "info symbol ADDRESS", "name the symbol covering an address",
	"Prints the symbol covering ADDRESS and the offset into it (WinDbg: ln).\n",
	run,
};

}  // namespace vtice::dbg
