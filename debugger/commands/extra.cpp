#include <array>

#include "commands.hpp"

namespace vtice::dbg {


std::span<const Command *const> extra_commands()
{
	static const std::array<const Command *, 12> kExtra = {&kCmdTrace, &kCmdInfoTask, &kCmdInfoThreads, &kCmdThread,
								&kCmdPtype, &kCmdOffsetof, &kCmdDmesg, &kCmdVmcore,
								&kCmdReverseStepi, &kCmdReverseNexti, &kCmdReverseContinue, &kCmdReverseFinish};
	return kExtra;
}

}  // namespace vtice::dbg
