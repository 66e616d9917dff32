// Branch tracing by the stub itself: the vtice hypervisor stub steps the
// traced task with the monitor trap flag and keeps its taken branches
// (hypervisor/debug/tracer.h), so the console only sets the trace up and
// reads it back (Qbtrace, qXfer:vtice-trace). Unlike block stepping, the
// traced code runs without a stop per branch, interrupts and exceptions
// come back as their own flagged subtrees, and the task is followed when
// it sleeps and wakes on another CPU.
#pragma once

#include "block_tracer.hpp"

namespace vtice::dbg {

class StubTracer {
public:
	StubTracer(Session &session, TraceOptions options);

	// From a function's first instruction until it returns to its caller
	// in the same task; every CPU's trace is read and merged by time.
	Result<TraceResult> trace_until_return();
	// What the stub said about the trace ("monitor btrace"), after a trace.
	const std::string &stub_report() const { return stub_report_; }

private:
	Result<void> enable_all(std::uint64_t task);
	void disable_all();
	Result<void> run_to_return(std::uint64_t task, std::uint64_t return_address, std::uint64_t caller_sp);
	Result<void> collect();
	void read_code();
	void record_entry_call(std::uint64_t entry, std::uint64_t return_address);

	Session &session_;
	Target &target_;
	TraceOptions options_;
	TraceResult result_;
	std::vector<int> traced_threads_;
	std::string stub_report_;
};

}  // namespace vtice::dbg
