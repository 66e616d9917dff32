#include <array>

#include "commands.hpp"

namespace vtice::dbg {


std::span<const Command *const> extra_commands()
{
	static const std::array<const Command *, 2> kExtra = {&kCmdTrace, &kCmdInfoTask};
	return kExtra;
}

}  // namespace vtice::dbg
