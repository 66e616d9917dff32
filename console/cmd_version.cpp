#include <cstdio>

#include "args.hpp"
#include "messages.hpp"
#include "subcommands.hpp"
#include "vtice/records.h"

namespace vtice::console {

int cmd_version(int argc, char **argv)
{
	auto args = parse_args(argc, argv, {});
	if (!args) {
		eprintf("vtice version: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::puts("usage: vtice version\n\nPrints the vtice version and the record format version.");
		return kExitOk;
	}
	std::printf("vtice %s (record format %d)\n", VTICE_VERSION, VTICE_RECORD_VERSION);
	return kExitOk;
}

}  // namespace vtice::console
