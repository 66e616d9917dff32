// vtice probe's console side: events per second a probe program takes,
// alone (Runtime) and from the rings' records (ProbeFeed: decode, order by
// time, pair returns with entries, fire). The goal (issue 24) is at least
// 5 M records/s/core aggregated. Figures are in docs/probes.md.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "checker.hpp"
#include "output.hpp"
#include "probe_feed.hpp"
#include "runtime.hpp"
#include "syscall_events.hpp"

namespace {

using namespace vtice;

probes::CheckedProgram compile(const char *source)
{
	auto c = probes::compile_program(source, [](std::string_view n) { return trace::syscall_number(n); });
	if (!c)
		std::abort();
	return std::move(*c);
}

class NoOutput : public probes::Output {
public:
	void text(std::string_view) override {}
	void map(const probes::MapInfo &, const probes::MapEntries &) override {}
};

std::vector<probes::ProbeEvent> make_events(std::size_t n)
{
	static const char *const comms[] = {"bash", "sshd", "cat", "systemd", "vtprobe", "kworker/0:1"};
	std::vector<probes::ProbeEvent> out(n);
	for (std::size_t i = 0; i < n; i++) {
		out[i].nr = 0;	// read
		out[i].comm = comms[i % 6];
		out[i].tid = out[i].pid = static_cast<std::uint32_t>(100 + i % 50);
		out[i].args = {3, 0x7ffd0000, (i * 37) % 65536, 0, 0, 0};
		out[i].nsecs = i * 1000;
		out[i].kind = i % 2 ? probes::PointKind::SyscallReturn : probes::PointKind::SyscallEnter;
	}
	return out;
}

void run_program(benchmark::State &state, const char *source)
{
	probes::CheckedProgram program = compile(source);
	NoOutput out;
	probes::Runtime rt(program, out);
	rt.begin(0);
	std::vector<probes::ProbeEvent> events = make_events(4096);
	for (auto _ : state)
		for (const auto &ev : events)
			rt.on_event(ev);
	state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events.size()));
}

void BM_CountByComm(benchmark::State &state) { run_program(state, "syscall:read { @[comm] = count(); }"); }
BENCHMARK(BM_CountByComm);

void BM_PredicateAndSum(benchmark::State &state)
{
	run_program(state, "syscall:read /comm == \"bash\" && arg2 > 100/ { @bytes[tid] = sum(arg2); }");
}
BENCHMARK(BM_PredicateAndSum);

void BM_Histogram(benchmark::State &state) { run_program(state, "syscall:read { @sizes = hist(arg2); }"); }
BENCHMARK(BM_Histogram);

void BM_Latency(benchmark::State &state)
{
	run_program(state, "syscall:read { @s[tid] = nsecs; } syscall:read:return /@s[tid]/ "
			   "{ @lat = hist(nsecs - @s[tid]); delete(@s[tid]); }");
}
BENCHMARK(BM_Latency);

// Entry (6 records) and exit (3 records) groups of 50 tasks on 2 CPUs.
std::vector<std::vector<vtice_record>> make_records(std::size_t calls, std::uint64_t &tsc)
{
	std::vector<std::vector<vtice_record>> per_cpu(2);
	for (std::size_t i = 0; i < calls; i++) {
		auto &ring = per_cpu[i % 2];
		std::uint32_t pid = static_cast<std::uint32_t>(100 + i % 50);
		for (int leave = 0; leave < 2; leave++) {
			vtice_record h{};
			h.type = leave ? VTICE_REC_SYSCALL_EXIT : VTICE_REC_SYSCALL_ENTER;
			h.cpu = static_cast<std::uint16_t>(i % 2);
			h.flags = leave ? 2 : 5;
			h.tsc = tsc++;
			h.u.syscall.nr = leave ? VTICE_SYSCALL_NR_UNKNOWN : 0;
			h.u.syscall.arg = leave ? 64 : 3;
			ring.push_back(h);
			auto data = [&](std::uint32_t kind, std::uint64_t a, std::uint64_t b) {
				vtice_record r{};
				r.type = VTICE_REC_SYSCALL_DATA;
				r.flags = kind;
				r.u.raw[0] = a;
				r.u.raw[1] = b;
				ring.push_back(r);
			};
			if (!leave) {
				data(VTICE_SYSCALL_DATA_ARGS12, 0x7ffd0000, 64);
				data(VTICE_SYSCALL_DATA_ARGS34, 0, 0);
				data(VTICE_SYSCALL_DATA_ARG5, 0, 0);
			}
			data(VTICE_SYSCALL_DATA_TASK, pid | static_cast<std::uint64_t>(pid) << 32, 0xffff888000000000ull + pid * 0x1000);
			std::uint64_t comm[2] = {};
			std::memcpy(comm, "vtprobe", 7);
			data(VTICE_SYSCALL_DATA_COMM, comm[0], comm[1]);
		}
	}
	return per_cpu;
}

void BM_FeedFromRecords(benchmark::State &state)
{
	probes::CheckedProgram program = compile("syscall:read:return { @[comm] = count(); @b = sum(retval); }");
	NoOutput out;
	probes::Runtime rt(program, out);
	rt.begin(0);
	console::ProbeFeed feed(rt, [](std::uint64_t tsc) { return tsc; });
	std::uint64_t tsc = 1;
	const std::size_t calls = 2048;
	// The same poll's records each time: every entry pairs with its exit
	// within the poll, so nothing carries over.
	auto recs = make_records(calls, tsc);
	std::size_t records = recs[0].size() + recs[1].size();
	for (auto _ : state)
		feed.feed(recs);
	state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * records));
	state.counters["events/s"] = benchmark::Counter(static_cast<double>(state.iterations() * calls * 2),
							benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FeedFromRecords);

}  // namespace
