#include "../btf/btf_ptype.hpp"
#include "../btf/btf_source.hpp"
#include "commands.hpp"

namespace vtice::dbg {

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	if (args.empty())
		return usage_error(kCmdPtype);
	auto types = ctx.session.kernel_types().get(ctx.session, ctx.out);
	if (!types)
		return types.error();
	auto id = (*types)->find(join(args));
	if (!id)
		return id.error();
	ctx.out.write(btf::describe_type(**types, *id));
	return {};
}

const Command kCmdPtype = {
	"ptype", {"dt"}, "ptype TYPE", "show a kernel type's definition and layout (BTF)",
	"Prints a struct or union with each member's byte offset and size, as pahole\n"
	"does (`ptype struct task_struct`, `ptype struct file`), or what a typedef or\n"
	"integer type is (`ptype pid_t`). Types come from the kernel's BTF: --btf FILE,\n"
	"else the .BTF section of the --symbols image, else the running kernel's\n"
	"__start_BTF..__stop_BTF read from guest memory.\n",
	run,
};

}  // namespace vtice::dbg
