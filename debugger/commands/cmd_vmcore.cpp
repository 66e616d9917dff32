#include "../vmcore/vmcore_dump.hpp"
#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	vmcore::DumpOptions options;
	for (std::size_t i = 0; i < args.size(); ++i) {
		if (args[i] == "--filter") {
			if (i + 1 == args.size())
				return make_error("--filter takes zero, free or zero,free");
			if (auto r = vmcore::parse_filter(args[++i], options); !r)
				return r.error();
		} else if (!args[i].empty() && args[i][0] == '-') {
			return make_error("vmcore: unknown option '" + args[i] + "'");
		} else if (options.path.empty()) {
			options.path = args[i];
		} else {
			return usage_error(kCmdVmcore);
		}
	}
	if (options.path.empty())
		return usage_error(kCmdVmcore);
	auto summary = vmcore::dump_vmcore(ctx.session, options, ctx.out);
	if (!summary)
		return summary.error();
	vmcore::print_dump_summary(ctx.out, options, *summary);
	return {};
}

const Command kCmdVmcore = {
	"vmcore", {"gcore"}, "vmcore FILE [--filter zero,free]", "write the stopped kernel to an ELF vmcore for crash and drgn",
	"Writes the stopped kernel's RAM and every CPU's registers to FILE in the\n"
	"layout of kdump's /proc/vmcore: a PRSTATUS note per CPU, the kernel's own\n"
	"VMCOREINFO note, a PT_LOAD per range of System RAM (from the kernel's\n"
	"iomem tree, read through BTF). Open it with `crash VMLINUX FILE` (the\n"
	"vmlinux with debug info, Debian's linux-image-*-dbg) or `drgn -c FILE`.\n"
	"Memory is read physically where the stub can (QEMU), else through the\n"
	"kernel's direct map; pages the target refuses are left out of the file\n"
	"and counted. --filter zero stores all-zero pages as zero fill, which\n"
	"takes no room in the file (makedumpfile -d 1); --filter free leaves out\n"
	"the buddy allocator's free pages, found in the kernel's struct pages\n"
	"(makedumpfile -d 16; both: zero,free). The file appears as FILE.part until it is complete; Ctrl-C stops\n"
	"the dump and removes it. Shows progress, rate and time left.\n",
	run,
};

}  // namespace vtice::dbg
