#include "probe_stub_source.hpp"

#include <csignal>

#include "hex.hpp"
#include "messages.hpp"
#include "probe_functions.hpp"
#include "profile_ioctl.hpp"
#include "trace_common.hpp"
#include "vtice/interrupts.hpp"

namespace vtice::console {
namespace {

// How long a break-in may take to stop the machine (the stub polls its
// line every 50 ms of guest time; an emulator runs slower than that).
constexpr int kBreakInTimeoutMs = 30000;

// A count over the run, from two reads summed over the CPUs that stopped:
// one missing from either read must not wrap the difference.
std::uint64_t over_run(std::uint64_t after, std::uint64_t before) { return after > before ? after - before : 0; }

// A CPU that did not stop for the stub since the arming never applied it.
void warn_if_cpus_missed(dbg::Target &target, std::uint64_t applied, const char *what)
{
	auto cpus = target.threads();
	if (cpus && applied < cpus->size())
		eprintf("vtice probe: warning: %s %llu of %zu CPUs (the others did not stop for the stub since it was "
			"armed)\n",
			what, static_cast<unsigned long long>(applied), cpus->size());
}

}  // namespace

Result<void> StubProbeSource::arm(const probes::CheckedProgram &program, RunTotals &totals)
{
	dbg::Target &target = session_.target();
	auto khz = target.tsc_khz();
	if (!khz)
		return khz.error();
	if (!*khz)
		return make_error("the stub does not know its TSC's rate");
	tsc_khz_ = *khz;
	// What a run cut off before its end left armed goes (arming replaces
	// it; what this program does not arm is turned off, and a refusal,
	// the kernel side's probes or a stub without the trap, is no error).
	if (program.has_fn_probes) {
		if (auto ok = arm_functions(program, totals); !ok)
			return ok;
	} else {
		(void)target.disarm_probes();
	}
	if (program.has_syscall_probes) {
		if (auto ok = arm_syscalls(program, totals); !ok) {
			(void)disarm(totals);	// the function probes just armed go too
			return ok;
		}
	} else {
		(void)target.disarm_syscalls();
	}
	if (program.profile_hz) {
		if (auto ok = arm_profile(program, totals); !ok) {
			(void)disarm(totals);	// the probes and the trap just armed go too
			return ok;
		}
	} else {
		(void)target.disarm_profile();
	}
	eprintf("vtice probe: the machine is stopped to drain the rings every %ld ms\n", drain_ms_);
	return session_.resume();
}

Result<void> StubProbeSource::arm_functions(const probes::CheckedProgram &program, RunTotals &totals)
{
	dbg::Target &target = session_.target();
	auto req = arm_request(program, program.fn_kstack ? kKstackBytes : 0);
	if (!req)
		return req.error();
	auto before = target.probe_hits();
	if (!before)
		return before.error();
	auto passed_before = target.probe_passed_over();
	if (!passed_before)
		return passed_before.error();
	if (auto ok = target.arm_probes(*req); !ok)
		return ok;
	armed_ = true;
	auto removed = target.probes_removed();	// an older stub keeps no count: nothing to watch
	removed_ = removed ? std::optional<std::uint64_t>(*removed) : std::nullopt;
	nothing_else_ = only_probe_hits(program);
	counts_ = RootCountTable(program, *req);
	totals.functions = true;
	totals.probes = req->count + req->nr_watches;
	totals.hits = *before;
	totals.passed_over = *passed_before;
	eprintf("vtice probe: %u probe points armed through the stub (hidden breakpoints and watched ranges)\n",
		totals.probes);
	return {};
}

// Every CPU arms the trap as it leaves this stop (the stub writes each
// CPU's VMCS only from that CPU); the counts run on since load.
Result<void> StubProbeSource::arm_syscalls(const probes::CheckedProgram &program, RunTotals &totals)
{
	auto req = syscalls_request(VTICE_SYSCALLS_ARM, TaskFilter{program.root_filter.comm, program.root_filter.pid},
				    program.syscall_strings, program.syscall_numbers);
	if (!req)
		return req.error();
	auto before = session_.target().syscall_counts();
	if (!before)
		return before.error();
	if (auto ok = session_.target().arm_syscalls(*req); !ok)
		return ok;
	syscalls_armed_ = true;
	totals.syscalls = true;
	totals.seen = before->seen;
	totals.recorded = before->recorded;
	eprintf("vtice probe: syscall trap armed through the stub: each CPU traps as it runs on\n");
	return {};
}

// While stopped: the trap's counts over the run, then the trap off (each
// CPU disarms as it leaves the stop, before it runs a guest instruction).
Result<void> StubProbeSource::disarm_syscalls(RunTotals &totals)
{
	auto after = session_.target().syscall_counts();
	if (!after)
		return after.error();
	if (auto ok = session_.target().disarm_syscalls(); !ok)
		return ok;
	syscalls_armed_ = false;
	totals.seen = over_run(after->seen, totals.seen);
	totals.recorded = over_run(after->recorded, totals.recorded);
	warn_if_cpus_missed(session_.target(), after->armed, "the syscall trap was armed on");
	return {};
}

// Every CPU starts sampling as it leaves this stop (its timer is its own
// VMCS's); the sample count runs on since load.
Result<void> StubProbeSource::arm_profile(const probes::CheckedProgram &program, RunTotals &totals)
{
	auto before = session_.target().profiler_counts();
	if (!before)
		return before.error();
	auto req = profile_arm_request(program.profile_hz, program.profile_kstack ? kKstackBytes : 0,
				       VTICE_PROFILE_ALL_CPUS,
				       TaskFilter{program.profile_filter.comm, program.profile_filter.pid});
	if (auto ok = session_.target().arm_profile(req); !ok)
		return ok;
	profile_armed_ = true;
	totals.profile = true;
	totals.samples = before->samples;
	eprintf("vtice probe: profiler armed through the stub: each CPU samples %u times a second as it runs on\n",
		program.profile_hz);
	return {};
}

// While stopped: the samples over the run, then the profiler off (each CPU
// stops as it leaves the stop).
Result<void> StubProbeSource::disarm_profile(RunTotals &totals)
{
	auto after = session_.target().profiler_counts();
	if (!after)
		return after.error();
	if (auto ok = session_.target().disarm_profile(); !ok)
		return ok;
	profile_armed_ = false;
	totals.samples = over_run(after->samples, totals.samples);
	warn_if_cpus_missed(session_.target(), after->armed, "the profiler sampled");
	return {};
}

Result<void> StubProbeSource::disarm(RunTotals &totals)
{
	if (auto ok = stop_machine(); !ok)
		return ok;
	if (!anything_armed())
		return {};
	if (profile_armed_)
		if (auto ok = disarm_profile(totals); !ok)
			return ok;
	if (syscalls_armed_)
		if (auto ok = disarm_syscalls(totals); !ok)
			return ok;
	if (armed_)
		if (auto ok = disarm_functions(totals); !ok)
			return ok;
	eprintf("vtice probe: %llu break-ins drained the rings; the machine is stopped\n",
		static_cast<unsigned long long>(drains_));
	return {};
}

// While stopped: root's last counts, then the probes off with their hits over the run.
Result<void> StubProbeSource::disarm_functions(RunTotals &totals)
{
	if (auto ok = read_counts(); !ok)
		return ok;
	auto passed = session_.target().probe_passed_over();
	if (!passed)
		return passed.error();
	auto unreadable = session_.target().probe_unreadable();	// since ARM, gone with the probes
	if (!unreadable)
		return unreadable.error();
	auto hits = session_.target().disarm_probes();
	if (!hits)
		return hits.error();
	armed_ = false;
	totals.hits = *hits - totals.hits;
	totals.passed_over = *passed - totals.passed_over;
	totals.root_unreadable = *unreadable;
	return {};
}

bool StubProbeSource::stop_requested() const
{
	return stopped_elsewhere_ || probes_gone_ || interrupts::command_interrupted() || interrupts::end_signal();
}

// The module removed every probe before a module that held one went
// (docs/probes.md, "A module's function"): said once; a run with nothing
// else armed ends, its maps printed.
void StubProbeSource::check_removed()
{
	if (!removed_)
		return;
	auto now = session_.target().probes_removed();
	if (!now || *now == *removed_)
		return;
	removed_ = *now;
	probes_gone_ = nothing_else_;
	eprintf("vtice probe: the probes were removed under the run (a module that held one went; the traced "
		"kernel's log says which)%s\n", nothing_else_ ? ": nothing is armed, the run ends" : "");
}

// A break-in, unless the machine is stopped already; a stop that is not
// the break-in's (a breakpoint of the user's, a crash guard) ends the run.
Result<void> StubProbeSource::stop_machine()
{
	if (session_.state() != dbg::SessionState::Running)
		return {};
	if (auto ok = session_.interrupt(); !ok)
		return ok;
	for (int waited = 0; waited < kBreakInTimeoutMs; waited += interrupts::kWaitSliceMs) {
		auto stop = session_.poll(interrupts::kWaitSliceMs);
		if (!stop)
			return stop.error();
		if (!*stop)
			continue;
		if ((*stop)->event.signal != SIGINT) {
			stopped_elsewhere_ = true;
			eprintf("vtice probe: the machine stopped on its own (signal %d at %s): the run ends there\n",
				(*stop)->event.signal, dbg::hex((*stop)->pc).c_str());
		}
		return {};
	}
	return make_error("the stub did not stop the machine within " + std::to_string(kBreakInTimeoutMs / 1000) +
			  " s of a break-in");
}

Result<std::vector<std::vector<vtice_record>>> StubProbeSource::take_rings()
{
	auto threads = session_.target().threads();
	if (!threads)
		return threads.error();
	std::vector<std::vector<vtice_record>> rings;
	for (int thread : *threads) {
		auto records = session_.target().take_ring(thread);
		if (!records)
			return records.error();
		rings.push_back(std::move(*records));
	}
	return rings;
}

Result<std::vector<std::vector<vtice_record>>> StubProbeSource::drain()
{
	if (auto ok = stop_machine(); !ok)
		return ok.error();
	auto rings = take_rings();
	if (!rings)
		return rings.error();
	if (armed_) {
		if (auto ok = read_counts(); !ok)
			return ok.error();
		check_removed();
	}
	drains_++;
	return rings;
}

Result<void> StubProbeSource::after_drain()
{
	if (anything_armed() && !stop_requested())
		return session_.resume();
	return {};
}

Result<void> StubProbeSource::read_counts()
{
	if (counts_.empty())
		return {};
	auto counts = session_.target().probe_counts(false);
	if (!counts)
		return counts.error();
	std::vector<std::uint64_t> sums;
	if (counts_.sums()) {
		auto read = session_.target().probe_counts(true);
		if (!read)
			return read.error();
		if (read->size() != counts->size())	// an empty reply: a stub without the packet
			return make_error("qVtice:probes:sums answered " + std::to_string(read->size()) + " sums for " +
					  std::to_string(counts->size()) + " addresses: the module's stub is older "
					  "than this console");
		sums = std::move(*read);
	}
	counts_.update(*counts, sums);
	return counts_.read_tables([this](std::uint32_t index) { return session_.target().probe_hist(index); },
				   [this](std::uint32_t index) { return session_.target().probe_keys(index); });
}

RootCounts StubProbeSource::root_counts() const { return counts_.totals(); }

std::uint64_t StubProbeSource::to_ns(std::uint64_t tsc) const
{
	// khz ticks a millisecond: tsc / khz ms, in two parts so nothing overflows.
	return tsc / tsc_khz_ * 1000000 + tsc % tsc_khz_ * 1000000 / tsc_khz_;
}

}  // namespace vtice::console
