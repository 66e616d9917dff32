// The calls a syscall-path trace leaves in the per-CPU rings
// (VTICE_IOC_PATH_TRACE, include/uapi/vtice/ioctl.h), put back together:
// each call's SYSCALL_ENTER group, its branches from every CPU as one
// timeline, its SYSCALL_EXIT group (a SYSRET only), and the TRACE_STOP
// that ends it.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "syscall_events.hpp"

namespace vtice::console {

struct PathCall {
	// BRANCH and LOST records, oldest first, all on the CPU the call began on.
	std::vector<vtice_record> records;
	// A recorded call's (--record) STEP, STEP_REGS and STEP_MEM records and
	// its LOST ones, in stamp order across the CPUs it ran on.
	std::vector<vtice_record> steps;
	trace::SyscallCall call;	// the ENTER and, after a SYSRET, the EXIT event
	std::uint32_t stop = 0;		// VTICE_TRACE_STOP_*; 0: still running at the end
	std::uint64_t task = 0;
	std::uint64_t insns = 0;	// the task's instructions the hypervisor stepped
	std::uint64_t lost = 0;		// records the full rings dropped inside the call
	std::uint64_t moves = 0;	// times the task moved to another CPU
};

class PathCallCollector {
public:
	// The records drained from every ring in one poll. Returns the calls
	// whose TRACE_STOP came in an earlier poll: a record another CPU stamped
	// just before the stop may reach its ring just after this poll read it.
	std::vector<PathCall> feed(const std::vector<std::vector<vtice_record>> &per_cpu);
	// At the end: every call whose stop was seen, then the one still running.
	std::vector<PathCall> finish();

	const trace::SyscallDecodeStats &stats() const { return stats_; }
	// Records of the call being traced now (0 between calls).
	std::size_t pending() const { return pending_.size(); }

private:
	std::vector<PathCall> complete(std::size_t stops);
	PathCall take_call(std::size_t end);

	std::vector<vtice_record> pending_;	// BRANCH, LOST, TRACE_STOP: TSC order
	std::deque<trace::SyscallEvent> enters_, exits_;
	trace::SyscallDecodeStats stats_;
};

}  // namespace vtice::console
