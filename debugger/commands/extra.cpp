#include <array>

#include "commands.hpp"

namespace vtice::dbg {


std::span<const Command *const> extra_commands()
{
	static const std::array<const Command *, 8> kExtra = {&kCmdTrace, &kCmdInfoTask, &kCmdInfoThreads, &kCmdThread,
							       &kCmdPtype, &kCmdOffsetof, &kCmdDmesg, &kCmdVmcore};
	return kExtra;
}

}  // namespace vtice::dbg
