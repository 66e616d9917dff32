#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (args.empty())
		return usage_error(kCmdTranslate);
	auto address = ctx.session.resolve_location(join(args));
	if (!address)
		return address.error();
	auto physical = ctx.session.translate(*address);
	if (!physical)
		return physical.error();
	ctx.out.print("0x%llx -> physical 0x%llx\n", static_cast<unsigned long long>(*address),
		      static_cast<unsigned long long>(*physical));
	return {};
}

const Command kCmdTranslate = {
	"vtop", {"info translate"}, "vtop ADDRESS", "translate a virtual address through the page tables",
	"Walks the current vCPU's page tables from CR3 (4-level, or 5-level when\n"
	"CR4.LA57 is set; 1 GiB and 2 MiB pages) over the stub's physical reads and\n"
	"prints the physical address. Needs a stub with physical reads (QEMU).\n",
	run,
};

}  // namespace vtice::dbg
