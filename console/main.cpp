// vtice: one binary, one subcommand per job.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "messages.hpp"
#include "subcommands.hpp"
#include "vtice/interrupts.hpp"

using namespace vtice::console;

static void print_usage(FILE *out)
{
	std::fprintf(out, "usage: vtice <command> [options] [args]\n\n"
			  "vtice is a stealth Linux kernel debugger and branch tracer.\n\n"
			  "commands:\n");
	for (const auto &sub : subcommands())
		std::fprintf(out, "  %-10s %s\n", sub.name, sub.summary);
	std::fprintf(out, "\nRun 'vtice <command> --help' for a command's options.\n");
}

static int run(int argc, char **argv)
{
	if (argc < 2) {
		print_usage(stderr);
		return kExitUsage;
	}
	const char *name = argv[1];
	if (!std::strcmp(name, "--help") || !std::strcmp(name, "-h") || !std::strcmp(name, "help")) {
		print_usage(stdout);
		return kExitOk;
	}
	for (const auto &sub : subcommands())
		if (!std::strcmp(name, sub.name))
			return sub.run(argc - 1, argv + 1);
	eprintf("vtice: unknown command '%s'\n\n", name);
	print_usage(stderr);
	return kExitUsage;
}

// Whatever a command printed, a failed write of it (a full disk, /dev/full,
// a closed pipe) is a failure, never a silent exit 0.
// A signal ends a command at once with 128+N unless the command waits on a
// target or a device, which then installs its own handling (attach, trace,
// hv break: vtice/interrupts.hpp).
int main(int argc, char **argv)
{
	vtice::interrupts::install_exit_on_signal();
	int status = run(argc, argv);
	if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
		eprintf("vtice: writing to standard output failed: %s\n", std::strerror(errno ? errno : EIO));
		return status == kExitOk ? kExitFailure : status;
	}
	return status;
}
