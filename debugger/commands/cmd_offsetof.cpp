#include "../btf/btf_source.hpp"
#include "commands.hpp"

namespace vtice::dbg {

// "offsetof struct task_struct comm", "offsetof struct task_struct se.vruntime":
// the last word is the member path, the words before it the type.
static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	std::string text = join(args);
	auto last = text.find_last_not_of(' ');
	auto split = last == std::string::npos ? std::string::npos : text.find_last_of(' ', last);
	if (split == std::string::npos)
		return usage_error(kCmdOffsetof);
	std::string type_name = text.substr(0, split), path = text.substr(split + 1, last - split);
	auto types = ctx.session.kernel_types().get(ctx.session, ctx.out);
	if (!types)
		return types.error();
	auto id = (*types)->find(type_name);
	if (!id)
		return id.error();
	auto member = (*types)->member(*id, path);
	if (!member)
		return member.error();
	std::uint64_t byte = member->bit_offset / 8;
	if (member->bitfield_bits)
		ctx.out.print("%s.%s: byte %llu bit %llu, %u bits\n", (*types)->name_of(*id).c_str(), path.c_str(),
			      static_cast<unsigned long long>(byte),
			      static_cast<unsigned long long>(member->bit_offset % 8), member->bitfield_bits);
	else
		ctx.out.print("%s.%s: offset %llu (0x%llx), size %llu\n", (*types)->name_of(*id).c_str(), path.c_str(),
			      static_cast<unsigned long long>(byte), static_cast<unsigned long long>(byte),
			      static_cast<unsigned long long>(member->size));
	return {};
}

const Command kCmdOffsetof = {
	"offsetof", {}, "offsetof TYPE MEMBER[.MEMBER...]", "byte offset of a member of a kernel type (BTF)",
	"Prints where a member lies in a struct or union, through nested and\n"
	"anonymous members: `offsetof struct task_struct comm`,\n"
	"`offsetof struct task_struct se.vruntime`. Bitfields give byte and bit.\n",
	run,
};

}  // namespace vtice::dbg
