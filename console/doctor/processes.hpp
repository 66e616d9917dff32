// The processes vtice doctor runs: vtice's own subcommands, as a user
// would type them, and small workloads under a comm the traces filter on.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vtice/result.hpp"

namespace vtice::console::doctor {

// This binary with args (argv[1]...), stdout and stderr to the two files;
// pinned to that CPU unless it is negative.
Result<pid_t> spawn_vtice(const std::vector<std::string> &args, const std::string &out_path,
			  const std::string &err_path, int cpu = -1);

// Two different CPUs this process may run on, for a trace's reader and its
// traced task: a reader queued behind the traced call on the task's CPU
// cannot drain the rings (docs/tracing.md). {-1, -1} with fewer than two.
struct CpuPair {
	int reader = -1, task = -1;
};
CpuPair reader_and_task_cpus();

// The calling thread on that CPU only (nothing if it is negative); false
// when the kernel refused.
bool pin_self_to(int cpu);

// A child named comm (prctl PR_SET_NAME) running work, then _exit(0).
Result<pid_t> fork_named(const std::string &comm, const std::function<void()> &work);

// The exit status (as wait_child's) if pid has ended, else nullopt.
std::optional<int> poll_child(pid_t pid);

// Waits up to timeout_ms for pid; past it, SIGKILL. Returns the exit
// status, 128+N after signal N, or -1 if it had to be killed.
int wait_child(pid_t pid, int timeout_ms);

// SIGINT (a trace's normal stop), then wait_child.
int interrupt_child(pid_t pid, int timeout_ms);

// SIGKILL and reap (a workload loop).
void kill_child(pid_t pid);

// The whole of a small text file ("" if it cannot be read).
std::string read_text(const std::string &path);

}  // namespace vtice::console::doctor
