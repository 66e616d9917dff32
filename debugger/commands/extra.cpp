#include <array>

#include "commands.hpp"

namespace vtice::dbg {


std::span<const Command *const> extra_commands()
{
	static const std::array<const Command *, 4> kExtra = {&kCmdTrace, &kCmdInfoTask, &kCmdInfoThreads, &kCmdThread};
	return kExtra;
}

}  // namespace vtice::dbg
