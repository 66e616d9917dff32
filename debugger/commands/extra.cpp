#include "commands.hpp"

namespace vtice::dbg {

std::span<const Command *const> extra_commands()
{
	return {};
}

}  // namespace vtice::dbg
