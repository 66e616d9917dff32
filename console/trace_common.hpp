// What both hypervisor tracers of `vtice trace` share: the task filter and
// its options, stopping on Ctrl-C, the poll's sleep, and what the syscall
// trap's errors mean.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "args.hpp"
#include "symbol_source.hpp"

extern "C" {
#include <vtice/ioctl.h>
}
#include "vtice/result.hpp"

namespace vtice::console {

struct TaskFilter {
	std::string comm;	// "" = any
	std::uint32_t pid = 0;	// 0 = any
};

// --comm NAME and --pid PID; an error names the bad value.
Result<TaskFilter> parse_task_filter(const ParsedArgs &args);
// "comm vtsys, pid 42", or "every task".
std::string describe_filter(const TaskFilter &filter);
// vtice_path_trace.mechanism (VTICE_TRACE_*) as the user reads it.
const char *describe_mechanism(std::uint32_t mechanism);
// vtice_path_trace.stepping (VTICE_PATH_STEP_*) as the user reads it.
const char *describe_stepping(std::uint32_t stepping);

// SIGINT, SIGTERM and SIGHUP set a flag (no SA_RESTART: a sleep ends at
// once); the trace stops, cleans up and reports.
void catch_stop_signals();
bool stop_requested();
// What a trace command exits with: its status, or 128+N after SIGTERM or
// SIGHUP (Ctrl-C is the normal way to stop a trace: its status stands).
int exit_status(int status);
void sleep_ms(long ms);

class DeviceFd;

// The running kernel's /proc/kallsyms (or path), with addresses: an error
// when they read as zero (kptr_restrict, not root), judged by `anchor`,
// a symbol every kernel has.
Result<std::unique_ptr<dbg::SymbolList>> read_running_kallsyms(const std::string &path, const char *anchor);
// The same in two steps, for a caller that also reads the text itself
// (which module a symbol is in).
Result<std::string> read_kallsyms_text(const std::string &path);
Result<std::unique_ptr<dbg::SymbolList>> parse_running_kallsyms(std::string_view text, const std::string &path,
								 const char *anchor);

// Syscalls whose entry events copy a string: number -> the argument
// (0..5) that points to it; at most VTICE_SYSCALL_STRINGS_MAX.
using SyscallStrings = std::map<std::uint64_t, int>;
// The syscalls whose events are recorded; empty: every one.
using SyscallNumbers = std::set<std::uint64_t>;

// The request VTICE_IOC_SYSCALLS takes (op, the filter, the string slots,
// the syscalls recorded): an error for more strings than the hypervisor
// copies. A number past the hypervisor's set (512) records every syscall.
Result<vtice_syscalls> syscalls_request(std::uint32_t op, const TaskFilter &filter, const SyscallStrings &strings,
					const SyscallNumbers &numbers = {});

// VTICE_IOC_SYSCALLS: VTICE_SYSCALLS_ARM with the filter (and strings and
// numbers), or VTICE_SYSCALLS_DISARM; the trap's counters come back in the request.
Result<vtice_syscalls> syscalls_ioctl(const DeviceFd &dev, const std::string &path, std::uint32_t op,
				      const TaskFilter &filter = {}, const SyscallStrings &strings = {},
				      const SyscallNumbers &numbers = {});

// An ioctl on the syscall trap (VTICE_IOC_SYSCALLS, VTICE_IOC_PATH_TRACE)
// failed with err: what it means for the user.
Error trap_error(const std::string &path, const char *ioctl_name, int err);

}  // namespace vtice::console
