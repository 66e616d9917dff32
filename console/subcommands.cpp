#include "subcommands.hpp"

#include <array>

namespace vtice::console {

int cmd_version(int argc, char **argv);
int cmd_hv(int argc, char **argv);

static const std::array kSubcommands = {
	Subcommand{"version", "print the vtice version and record format", cmd_version},
	Subcommand{"hv", "hypervisor status (CPUs, VM exits) and VMX capabilities", cmd_hv},
};

std::span<const Subcommand> subcommands() { return kSubcommands; }

}  // namespace vtice::console
