// vtice doctor's two tracer checks, run as a user runs them: `vtice trace
// syscalls` on a child's known syscalls, and `vtice trace syscall openat`
// on a child's openat, judged against the kernel's ftrace of the same call.
#pragma once

#include <string>

#include "checks.hpp"
#include "vtice/result.hpp"

namespace vtice::console::doctor {

// The streamed calls of a child that makes five getppid calls: all five,
// each returning this process's pid (the kernel's own answer). The text
// says so; an error says what was missing.
Result<std::string> check_syscall_trap(const DoctorOptions &options);

struct TraceOutcome {
	bool ok = false;
	bool lost_records = false;	// a wait for the reader ran out (docs/tracing.md)
	std::string size;		// "N records lost, M instructions, trace FILE"
	unsigned mechanism = 0;		// VTICE_TRACE_*, from the 'armed on' line
	std::string details;
};

// One openat(path) of a child traced whole; ok when the trace is lossless
// and holds at least 97 % of the calls of oracle (ftrace's function_graph of
// the same openat), in order. An error: the trace did not run.
Result<TraceOutcome> trace_one_openat(const DoctorOptions &options, const std::string &oracle,
				      const std::string &path);

}  // namespace vtice::console::doctor
