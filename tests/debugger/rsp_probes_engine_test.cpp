// The console's RSP client (RspTarget) against the hypervisor stub's own
// engine (hypervisor/debug/rsp*.c, the C the module runs) over a fake
// machine, byte for byte in process: what `probe` in vtice attach sends
// must be what the stub takes, in the kernel side's order (probes_dev.c).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "../hypervisor/rsp_fake_machine.hpp"
#include "rsp/rsp_target.hpp"
#include "vtice/vmcall.h"

namespace {

using vtice::fake::FakeMachine;
using Op = std::tuple<uint32_t, uint32_t, uint64_t, uint64_t, uint64_t>;

std::string *g_reply;

// A stopped machine's stub: every byte written goes to the engine, and
// what the engine answers is what the next read returns.
class EngineTransport final : public vtice::dbg::rsp::Transport {
public:
	explicit EngineTransport(FakeMachine &m)
	{
		g_reply = &reply_;
		vt_rsp_init(&rsp_, &FakeMachine::ops, &m, [](void *, u8 b) { *g_reply += (char)b; });
		vt_dbg_stop stop{0, VT_STOP_SIGINT, 0};
		vt_rsp_report_stop(&rsp_, &stop);
		reply_.clear();
	}
	vtice::Result<void> write_all(std::string_view bytes) override
	{
		for (unsigned char c : bytes)
			vt_rsp_feed(&rsp_, c, true);
		return {};
	}
	vtice::Result<std::string> read_some(std::size_t max, int) override
	{
		std::string out = reply_.substr(0, max);
		reply_.erase(0, out.size());
		return out;
	}
	std::string describe() const override { return "the stub's engine"; }

private:
	vt_rsp rsp_{};
	std::string reply_;
};

class RspProbesEngine : public ::testing::Test {
protected:
	FakeMachine m;
	std::unique_ptr<vtice::dbg::rsp::RspTarget> target;

	void SetUp() override
	{
		auto t = vtice::dbg::rsp::RspTarget::connect(std::make_unique<EngineTransport>(m));
		ASSERT_TRUE(t) << t.error().to_string();
		target = std::move(*t);
		m.probe_ops.clear();
	}
};

TEST_F(RspProbesEngine, TheStubSaysItArmsProbes)
{
	EXPECT_TRUE(target->features().probes);
	auto khz = target->tsc_khz();
	ASSERT_TRUE(khz);
	EXPECT_EQ(*khz, 2400000u);
}

TEST_F(RspProbesEngine, ARequestArmsAsTheKernelSideWould)
{
	vtice_probes req{};
	req.pid = 0x7b;
	std::memcpy(req.comm, "bash", 4);
	req.stack_bytes = 64;
	req.flags = VTICE_PROBES_MORE_REGS;
	req.count = 2;
	req.addrs[0] = FakeMachine::kTextBase + 4;
	req.addrs[1] = FakeMachine::kTextBase + 0x100;
	req.program[0] = 1;
	req.nr_programs = 1;
	req.fetch[0][0] = {VTICE_FETCH_ARG, 0, 0, 0};
	req.fetch[0][1] = {VTICE_FETCH_ADD, 0, 0, -8};
	req.stack_points = 2;	// the second address's hits copy the stack
	req.nr_watches = 2;
	req.watch[0] = {FakeMachine::kDataBase + 0x10, 8, VTICE_PROBE_WATCH_WRITE};
	req.watch[1] = {FakeMachine::kDataBase + 0x40, 4, VTICE_PROBE_WATCH_ACCESS};
	req.stack_watches = 2;	// ...and the second range's
	ASSERT_TRUE(target->arm_probes(req));

	uint64_t bash = 0x68736162, add_minus_8;
	vtice_fetch_op add = req.fetch[0][1];
	std::memcpy(&add_minus_8, &add, sizeof(add_minus_8));
	std::vector<Op> want = {{0, VTICE_VMCALL_PROBE_CLEAR, 0, 0, 0},
				{0, VTICE_VMCALL_PROBE_FILTER, 0x7b, bash, 0},
				{0, VTICE_VMCALL_PROBE_STACK, 64, 1, 0},
				{0, VTICE_VMCALL_PROBE_INTERCEPT, 1, 0, 0},
				{0, VTICE_VMCALL_PROBE_FETCH, 0, 0, VTICE_FETCH_ARG},
				{0, VTICE_VMCALL_PROBE_FETCH, 0, 1, add_minus_8}};
	for (uint64_t i = 2; i < VTICE_FETCH_OPS_MAX; i++)
		want.emplace_back(0, VTICE_VMCALL_PROBE_FETCH, 0, i, 0);
	const uint64_t stack = 1ull << 63;	// vmcall.h's COPIES_STACK, written out
	want.emplace_back(0, VTICE_VMCALL_PROBE_ADD, req.addrs[0], 0, 1);
	want.emplace_back(0, VTICE_VMCALL_PROBE_ADD, req.addrs[1], 0, stack);
	want.emplace_back(0, VTICE_VMCALL_PROBE_WATCH, req.watch[0].addr, 0, 8 | 1ull << 32);
	want.emplace_back(0, VTICE_VMCALL_PROBE_WATCH, req.watch[1].addr, 0, 4 | 3ull << 32 | stack);
	EXPECT_EQ(m.probe_ops, want);
}

TEST_F(RspProbesEngine, ARefusedStepReportsTheErrorAndTurnsTheProbesOff)
{
	vtice_probes req{};
	req.count = 1;
	req.addrs[0] = FakeMachine::kTextBase;
	m.probe_error = -16;	// the kernel side owns them
	auto armed = target->arm_probes(req);
	ASSERT_FALSE(armed);
	EXPECT_NE(armed.error().to_string().find("EBUSY"), std::string::npos) << armed.error().to_string();
	ASSERT_GE(m.probe_ops.size(), 2u);
	EXPECT_EQ(std::get<1>(m.probe_ops[m.probe_ops.size() - 1]), (uint32_t)VTICE_VMCALL_PROBE_CLEAR)
		<< "off: the stub's CLEAR, refused as well here";
}

TEST_F(RspProbesEngine, ARingIsTakenWholeAndOnlyOnce)
{
	for (uint64_t i = 0; i < 300; i++) {	// more than one qXfer reply holds
		vtice_record r{};
		r.type = VTICE_REC_PROBE_HIT;
		r.cpu = 1;
		r.tsc = 0x2324247d2a2a0000ull + i;	// bytes that travel escaped
		m.ring[1].push_back(r);
	}
	auto taken = target->take_ring(2);
	ASSERT_TRUE(taken) << taken.error().to_string();
	ASSERT_EQ(taken->size(), 300u);
	for (uint64_t i = 0; i < 300; i++)
		ASSERT_EQ((*taken)[i].tsc, 0x2324247d2a2a0000ull + i);
	EXPECT_TRUE(m.ring[1].empty()) << "taken after it was read";
	auto again = target->take_ring(2);
	ASSERT_TRUE(again);
	EXPECT_TRUE(again->empty());
}

TEST_F(RspProbesEngine, DisarmTurnsThemOffAndCountsTheHits)
{
	m.probe_hits = 1234;
	auto hits = target->disarm_probes();
	ASSERT_TRUE(hits);
	EXPECT_EQ(*hits, 1234u);
	EXPECT_EQ(m.probe_ops, (std::vector<Op>{{0, VTICE_VMCALL_PROBE_CLEAR, 0, 0, 0},
						{0, VTICE_VMCALL_PROBE_INTERCEPT, 0, 0, 0}}));
}

// What root counted at an address into a histogram or by key comes back
// through the stub's packets (hist:I, keys:I) as the machine holds it.
TEST_F(RspProbesEngine, RootsBucketsAndKeySlotsComeBackAsTheMachineHoldsThem)
{
	m.probe_counts = {9, 4};
	m.probe_hists.resize(2);
	m.probe_hists[1][2] = 3;
	m.probe_hists[1][VTICE_FETCH_HIST_BUCKETS - 1] = 1;
	m.probe_keys.resize(2);
	m.probe_keys[0][0] = {{0x6f6270747679ull, 0}, 5, 4096};
	m.probe_keys[0][7] = {{~0ull, 0x1234}, 4, ~0ull};	// a sum of -1
	auto buckets = target->probe_hist(1);
	ASSERT_TRUE(buckets) << buckets.error().to_string();
	std::vector<uint64_t> want(VTICE_FETCH_HIST_BUCKETS);
	want[2] = 3;
	want.back() = 1;
	EXPECT_EQ(*buckets, want);
	auto slots = target->probe_keys(0);
	ASSERT_TRUE(slots) << slots.error().to_string();
	ASSERT_EQ(slots->size(), size_t{VTICE_FETCH_KEYED_SLOTS});
	for (size_t i = 0; i < slots->size(); i++) {
		const vtice_probe_key &got = (*slots)[i], &had = m.probe_keys[0][i];
		EXPECT_EQ(got.count, had.count) << "slot " << i;
		EXPECT_EQ(got.key[0], had.key[0]) << "slot " << i;
		EXPECT_EQ(got.key[1], had.key[1]) << "slot " << i;
		EXPECT_EQ(got.value, had.value) << "slot " << i;
	}
	auto none = target->probe_keys(2);
	ASSERT_FALSE(none);
	EXPECT_NE(none.error().message.find("stub error 16"), std::string::npos) << none.error().message;
	EXPECT_FALSE(target->probe_hist(2)) << "no third address";
}

// vmcall.h's slot layout, by hand: number | N << 12, N the argument + 1.
TEST_F(RspProbesEngine, TheSyscallTrapGetsItsFilterAndStringSlots)
{
	vtice_syscalls req{};
	req.pid = 42;
	std::memcpy(req.comm, "cat", 3);
	req.str_nr[0] = 257;	// openat: the path is argument 1
	req.str_arg[0] = 2;
	req.str_nr[5] = 2;	// open: argument 0, in slot 5 (the second word's second)
	req.str_arg[5] = 1;
	ASSERT_TRUE(target->arm_syscalls(req));
	EXPECT_TRUE(m.syscall_trap == (FakeMachine::SyscallTrap{true, 42, "cat", 0x2101, 0x10020000, {}}));
	req.flags = VTICE_SYSCALLS_CHOSEN;	// only read (0) and openat (257): bits by hand
	req.nrs[0] = 1;
	req.nrs[4] = 2;
	ASSERT_TRUE(target->arm_syscalls(req));
	EXPECT_EQ(m.syscall_trap.numbers, (std::vector<uint64_t>{1, 0, 0, 0, 2, 0, 0, 0}));
	m.syscalls_seen = 90;
	m.syscalls_recorded = 12;
	auto counts = target->syscall_counts();
	ASSERT_TRUE(counts) << counts.error().to_string();
	EXPECT_EQ(counts->armed, FakeMachine::kCpus);
	EXPECT_EQ(counts->seen, 90u);
	EXPECT_EQ(counts->recorded, 12u);
	ASSERT_TRUE(target->disarm_syscalls());
	EXPECT_FALSE(m.syscall_trap.on);
	EXPECT_TRUE(m.probe_ops.empty());
}

TEST_F(RspProbesEngine, ATakenTrapIsRefusedSayingWhoHasIt)
{
	m.syscall_error = -16;
	auto armed = target->arm_syscalls(vtice_syscalls{});
	ASSERT_FALSE(armed);
	EXPECT_NE(armed.error().to_string().find("EBUSY"), std::string::npos) << armed.error().to_string();
	m.syscall_error = -95;
	armed = target->arm_syscalls(vtice_syscalls{});
	ASSERT_FALSE(armed);
	EXPECT_NE(armed.error().to_string().find("load IA32_EFER"), std::string::npos) << armed.error().to_string();
}

TEST_F(RspProbesEngine, AStringSlotTheHypervisorCannotTakeIsNotSent)
{
	vtice_syscalls req{};
	req.str_nr[0] = VTICE_SYSCALL_STRING_NR_LIMIT;
	req.str_arg[0] = 1;
	EXPECT_FALSE(target->arm_syscalls(req));
	req.str_nr[0] = 1;
	req.str_arg[0] = VTICE_PROBE_ARGS + 1;
	EXPECT_FALSE(target->arm_syscalls(req));
	EXPECT_TRUE(m.syscall_trap.comm.empty() && !m.syscall_trap.on) << "nothing reached the stub";
}

TEST_F(RspProbesEngine, TheProfilerGetsItsRateStackAndFilter)
{
	vtice_profile req{};
	req.hz = 99;
	req.stack_bytes = 2048;
	req.pid = 7;
	std::memcpy(req.comm, "dd", 2);
	ASSERT_TRUE(target->arm_profile(req));
	EXPECT_TRUE(m.profiler == (FakeMachine::Profiler{true, 99, 2048, 7, "dd"}));
	m.profile_samples = 500;
	auto counts = target->profiler_counts();
	ASSERT_TRUE(counts) << counts.error().to_string();
	EXPECT_EQ(counts->armed, FakeMachine::kCpus);
	EXPECT_EQ(counts->samples, 500u);
	ASSERT_TRUE(target->disarm_profile());
	EXPECT_FALSE(m.profiler.on);
	EXPECT_TRUE(m.probe_ops.empty() && !m.syscall_trap.on);
}

TEST_F(RspProbesEngine, ATakenOrMissingProfilerIsRefusedSayingWhy)
{
	vtice_profile req{};
	req.hz = 99;
	m.profile_error = -16;
	auto armed = target->arm_profile(req);
	ASSERT_FALSE(armed);
	EXPECT_NE(armed.error().to_string().find("EBUSY"), std::string::npos) << armed.error().to_string();
	m.profile_error = -95;
	armed = target->arm_profile(req);
	ASSERT_FALSE(armed);
	EXPECT_NE(armed.error().to_string().find("VMX-preemption timer"), std::string::npos)
		<< armed.error().to_string();
	m.profile_error = -22;
	armed = target->arm_profile(req);
	ASSERT_FALSE(armed);
	EXPECT_NE(armed.error().to_string().find("99 Hz"), std::string::npos) << armed.error().to_string();
	EXPECT_FALSE(m.profiler.on);
}

}  // namespace
