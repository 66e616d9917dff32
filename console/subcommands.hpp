// The table of vtice subcommands. Each lives in its own cmd_*.cpp with its
// help text and is listed once in subcommands.cpp.
#pragma once

#include <span>

namespace vtice::console {

struct Subcommand {
	const char *name;
	const char *summary;  // one line, shown by "vtice --help"
	int (*run)(int argc, char **argv);  // argv[0] is the subcommand name
};

std::span<const Subcommand> subcommands();

// Exit codes shared by all subcommands.
enum ExitCode { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

}  // namespace vtice::console
