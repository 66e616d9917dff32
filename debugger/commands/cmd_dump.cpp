#include "memory_format.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	// WinDbg: "dq ADDRESS [L count]"; the unit comes from the alias used,
	// which execute_line does not pass on, so the first word may carry it.
	if (args.empty())
		return usage_error(kCmdDump);
	unsigned size = 8;
	std::size_t first = 0;
	if (args[0] == "-b" || args[0] == "-w" || args[0] == "-d" || args[0] == "-q") {
		size = args[0] == "-b" ? 1 : args[0] == "-w" ? 2 : args[0] == "-d" ? 4 : 8;
		first = 1;
	}
	std::uint64_t count = 0;
	std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(first), args.end());
	if (rest.size() >= 2 && (rest[rest.size() - 2] == "L" || rest[rest.size() - 2] == "l")) {
		auto n = parse_count(rest.back(), "count");
		if (!n)
			return n.error();
		count = *n;
		rest.resize(rest.size() - 2);
	}
	if (rest.empty())
		return usage_error(kCmdDump);
	auto address = ctx.session.resolve_location(join(rest));
	if (!address)
		return address.error();
	return dump_memory(ctx, *address, size, count ? count : 128 / size);
}

const Command kCmdDump = {
	"dump", {}, "dump [-b|-w|-d|-q] ADDRESS [L COUNT]", "WinDbg-style memory dump (db/dw/dd/dq)",
	"Dumps memory in bytes, words, dwords or qwords (default 128 bytes). The\n"
	"WinDbg spellings db, dw, dd and dq are accepted as command names.\n",
	run,
};

}  // namespace vtice::dbg
