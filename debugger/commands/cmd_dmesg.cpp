#include "../btf/btf_source.hpp"
#include "../kernel_log.hpp"
#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (args.size() > 1)
		return usage_error(kCmdDmesg);
	std::uint64_t count = 0;
	if (!args.empty()) {
		auto n = parse_count(args[0], "record count");
		if (!n)
			return n.error();
		count = *n;
	}
	auto types = ctx.session.kernel_types().get(ctx.session, ctx.out);
	if (!types)
		return make_error("dmesg needs the kernel's types: " + types.error().message);
	auto records = read_kernel_log(ctx.session, **types, count, ctx.out);
	if (!records)
		return records.error();
	for (const LogRecord &record : *records)
		ctx.out.write(format_log_record(record));
	return {};
}

const Command kCmdDmesg = {
	"dmesg", {"log"}, "dmesg [N]", "the kernel's log from its memory (the last N records)",
	"Reads the kernel's printk ring buffer (Linux 5.10+, `prb`) from the stopped\n"
	"kernel's memory, as the crash utility's `log` does, and prints it the way\n"
	"the kernel's syslog shows it: \"[seconds.micros] text\". Works on a kernel\n"
	"that can no longer print (after a panic). Offsets come from the kernel's\n"
	"BTF (see ptype). Control bytes print as \\xNN.\n",
	run,
};

}  // namespace vtice::dbg
