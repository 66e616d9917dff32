#include "subcommands.hpp"

#include <array>

namespace vtice::console {

int cmd_version(int argc, char **argv);
int cmd_syms(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_hv(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_trace_syscall(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_serve_replay(int argc, char **argv);

static const std::array kSubcommands = {
	Subcommand{"attach", "debug a kernel over the GDB remote protocol (QEMU, kgdb)", cmd_attach},
	Subcommand{"dump", "write a stopped or crashed kernel to a vmcore for crash and drgn (RSP)", cmd_dump},
	Subcommand{"syms", "load kernel symbols (image, System.map, kallsyms, dump) and resolve", cmd_syms},
	Subcommand{"report", "render a branch trace: function graph, flame graph stacks, Perfetto", cmd_report},
	Subcommand{"replay", "step forwards and backwards through a recorded kernel path (trace --record)", cmd_replay},
	Subcommand{"serve-replay", "serve a recorded kernel path to stock gdb, reverse execution included (RSP)",
		   cmd_serve_replay},
	Subcommand{"hv", "hypervisor status (CPUs, VM exits) and VMX capabilities", cmd_hv},
	Subcommand{"trace", "syscall events, or the branches of one syscall, from the hypervisor", cmd_trace},
	Subcommand{"probe", "bpftrace-style probes on syscalls, run from the hypervisor (root)", cmd_probe},
	Subcommand{"profile", "sample every CPU's kernel stack from the hypervisor: top functions, flame graphs (root)",
		   cmd_profile},
	Subcommand{"doctor", "check on this machine that each hypervisor mechanism works (root)", cmd_doctor},
	Subcommand{"version", "print the vtice version and record format", cmd_version},
};

std::span<const Subcommand> subcommands() { return kSubcommands; }

}  // namespace vtice::console
