// The probes of a `probe` command in vtice attach, armed through the vtice
// hypervisor's debug stub (QVtice:probes, docs/probes.md "Through the
// debug stub"): the machine runs between drains; each drain breaks in,
// takes every CPU's unread records from its ring, and lets it run again.
// The kernel side of the module plays no part, so it works on a kernel
// too broken or locked down to open /dev/vtice.
#pragma once

#include <cstdint>
#include <optional>

#include "probe_run.hpp"
#include "session.hpp"

namespace vtice::console {

class StubProbeSource final : public ProbeSource {
public:
	// drain_ms: how long the machine runs between two drains.
	StubProbeSource(dbg::Session &session, long drain_ms) : session_(session), drain_ms_(drain_ms) {}

	// The run's first and last act leave the machine stopped, as every
	// command of the debugger does.
	Result<void> arm(const probes::CheckedProgram &program, RunTotals &totals) override;
	Result<void> disarm(RunTotals &totals) override;
	// The machine stays stopped until after_drain(): a kstack's module
	// tables are read through the stub while the records are fed.
	Result<std::vector<std::vector<vtice_record>>> drain() override;
	Result<void> after_drain() override;
	RootCounts root_counts() const override;
	long poll_ms() const override { return drain_ms_; }
	bool stop_requested() const override;

	// Nanoseconds from the target's TSC (its rate asked at arm()).
	std::uint64_t to_ns(std::uint64_t tsc) const;
	// Break-ins the run made to drain, and records taken.
	std::uint64_t drains() const { return drains_; }

private:
	Result<void> arm_functions(const probes::CheckedProgram &program, RunTotals &totals);
	Result<void> arm_syscalls(const probes::CheckedProgram &program, RunTotals &totals);
	Result<void> disarm_functions(RunTotals &totals);
	Result<void> disarm_syscalls(RunTotals &totals);
	Result<void> arm_profile(const probes::CheckedProgram &program, RunTotals &totals);
	Result<void> disarm_profile(RunTotals &totals);
	bool anything_armed() const { return armed_ || syscalls_armed_ || profile_armed_; }
	Result<void> stop_machine();
	Result<std::vector<std::vector<vtice_record>>> take_rings();
	Result<void> read_counts();	// while stopped and armed
	void check_removed();		// the same

	dbg::Session &session_;
	long drain_ms_;
	bool armed_ = false;		// the function probes
	std::optional<std::uint64_t> removed_;	// the stub's count of removals at arming (none: it keeps none)
	bool nothing_else_ = false;	// no syscall, profile or interval probe beside them
	bool probes_gone_ = false;	// a module's going removed them: the run ends
	bool syscalls_armed_ = false;	// the syscall trap
	bool profile_armed_ = false;	// the profiler
	bool stopped_elsewhere_ = false;	// a stop not of the run's making ended it
	std::uint64_t tsc_khz_ = 0;
	std::uint64_t drains_ = 0;
	RootCountTable counts_;	// what root counted, as last read
};

}  // namespace vtice::console
