// PathCallCollector (console/path_calls.cpp): the calls of a syscall-path
// trace put back together from per-CPU polls. The inputs follow the record
// sequence include/uapi/vtice/ioctl.h promises for VTICE_IOC_PATH_TRACE;
// what each call must hold follows from it and from ring.h's LOST records.
#include <gtest/gtest.h>

#include <cstring>

#include "path_calls.hpp"

using namespace vtice::console;

namespace {

constexpr uint64_t kTask = 0xffff888000020000ull;

vtice_record rec(uint16_t type, uint16_t cpu, uint64_t tsc, uint32_t flags = 0, uint64_t a = 0, uint64_t b = 0)
{
	vtice_record r{};
	r.type = type;
	r.cpu = cpu;
	r.tsc = tsc;
	r.flags = flags;
	r.u.raw[0] = a;
	r.u.raw[1] = b;
	return r;
}

vtice_record branch(uint16_t cpu, uint64_t tsc, uint64_t from, uint64_t to)
{
	return rec(VTICE_REC_BRANCH, cpu, tsc, VTICE_BRANCH_FROM_STEP, from, to);
}

// A SYSCALL_ENTER or EXIT group with its TASK and COMM records.
std::vector<vtice_record> group(bool enter, uint16_t cpu, uint64_t tsc, uint64_t value)
{
	std::vector<vtice_record> g;
	g.push_back(rec(enter ? VTICE_REC_SYSCALL_ENTER : VTICE_REC_SYSCALL_EXIT, cpu, tsc, 2,
			enter ? 257 : VTICE_SYSCALL_NR_UNKNOWN, value));
	g.push_back(rec(VTICE_REC_SYSCALL_DATA, cpu, tsc, VTICE_SYSCALL_DATA_TASK, 42 | (42ull << 32), kTask));
	vtice_record comm = rec(VTICE_REC_SYSCALL_DATA, cpu, tsc, VTICE_SYSCALL_DATA_COMM);
	std::memcpy(comm.u.raw, "vtopen", 7);
	g.push_back(comm);
	return g;
}

void append(std::vector<vtice_record> &to, const std::vector<vtice_record> &more)
{
	to.insert(to.end(), more.begin(), more.end());
}

TEST(PathCalls, ACallIsHandedOverOnePollAfterItsStop)
{
	PathCallCollector c;
	std::vector<vtice_record> cpu0 = group(true, 0, 100, 0);
	cpu0.push_back(branch(0, 101, 0x401000, 0xffffffff81e00000ull));
	cpu0.push_back(branch(0, 102, 0xffffffff81e00010ull, 0xffffffff81100000ull));
	append(cpu0, group(false, 0, 110, 3));
	cpu0.push_back(rec(VTICE_REC_TRACE_STOP, 0, 111, VTICE_TRACE_STOP_SYSRET, kTask, 57));
	EXPECT_TRUE(c.feed({cpu0, {}}).empty()) << "another CPU's last records may still be on their way";
	std::vector<vtice_record> late = {branch(1, 105, 0xffffffff81100010ull, 0xffffffff81100020ull)};
	auto calls = c.feed({{}, late});
	ASSERT_EQ(calls.size(), 1u);
	const PathCall &call = calls[0];
	EXPECT_EQ(call.stop, (uint32_t)VTICE_TRACE_STOP_SYSRET);
	EXPECT_EQ(call.task, kTask);
	EXPECT_EQ(call.insns, 57u);
	ASSERT_EQ(call.records.size(), 3u) << "the late record of CPU 1 belongs to the call";
	EXPECT_EQ(call.records[2].tsc, 105u) << "TSC order";
	for (const auto &r : call.records)
		EXPECT_EQ(r.cpu, 0) << "one timeline, on the CPU the call began on";
	EXPECT_EQ(call.moves, 1u) << "CPU 0, CPU 0, then CPU 1";
	ASSERT_TRUE(call.call.enter && call.call.exit);
	EXPECT_EQ(call.call.enter->nr, 257u);
	EXPECT_EQ(call.call.exit->ret, 3u);
}

TEST(PathCalls, RecordsAfterAStopBelongToTheNextCall)
{
	PathCallCollector c;
	std::vector<vtice_record> cpu0 = group(true, 0, 10, 0);
	cpu0.push_back(branch(0, 11, 1, 2));
	cpu0.push_back(rec(VTICE_REC_TRACE_STOP, 0, 12, VTICE_TRACE_STOP_USER, kTask, 1));
	append(cpu0, group(true, 0, 20, 0));
	cpu0.push_back(branch(0, 21, 3, 4));
	cpu0.push_back(rec(VTICE_REC_TRACE_STOP, 0, 22, VTICE_TRACE_STOP_MAX_INSNS, kTask, 9));
	EXPECT_TRUE(c.feed({cpu0}).empty());
	auto calls = c.feed({{}});
	ASSERT_EQ(calls.size(), 2u);
	EXPECT_EQ(calls[0].records.size(), 1u);
	EXPECT_EQ(calls[0].records[0].u.branch.from, 1u);
	EXPECT_FALSE(calls[0].call.exit) << "no SYSRET, no exit event";
	EXPECT_EQ(calls[1].stop, (uint32_t)VTICE_TRACE_STOP_MAX_INSNS);
	EXPECT_EQ(calls[1].records[0].u.branch.from, 3u);
	EXPECT_TRUE(calls[1].call.enter);
}

TEST(PathCalls, LostRecordsAreCountedInTheirCall)
{
	PathCallCollector c;
	std::vector<vtice_record> cpu0 = group(true, 0, 10, 0);
	cpu0.push_back(branch(0, 11, 1, 2));
	cpu0.push_back(rec(VTICE_REC_LOST, 0, 12, 0, 17, 0));
	cpu0.push_back(rec(VTICE_REC_TRACE_STOP, 0, 13, VTICE_TRACE_STOP_SYSRET, kTask, 100));
	auto calls = c.finish();
	EXPECT_TRUE(calls.empty()) << "nothing was fed";
	c.feed({cpu0});
	calls = c.finish();
	ASSERT_EQ(calls.size(), 1u);
	EXPECT_EQ(calls[0].lost, 17u);
}

TEST(PathCalls, TheCallStillRunningAtTheEndIsReportedUnfinished)
{
	PathCallCollector c;
	std::vector<vtice_record> cpu0 = group(true, 0, 10, 0);
	cpu0.push_back(branch(0, 11, 1, 2));
	c.feed({cpu0});
	auto calls = c.finish();
	ASSERT_EQ(calls.size(), 1u);
	EXPECT_EQ(calls[0].stop, 0u);
	EXPECT_EQ(calls[0].records.size(), 1u);
	EXPECT_TRUE(calls[0].call.enter);
}

}  // namespace

// A recorded call (--record): its STEP, STEP_REGS and STEP_MEM records go to
// the call's steps, in stamp order across the CPUs it ran on, and never
// among the branches the graph is drawn from.
TEST(PathCalls, ARecordedCallsStepsAreKeptApartInStampOrder)
{
	PathCallCollector c;
	std::vector<vtice_record> cpu0 = group(true, 0, 100, 0), cpu1;
	cpu0.push_back(branch(0, 101, 0x401000, 0xffffffff81e00000ull));
	cpu0.push_back(rec(VTICE_REC_STEP, 0, 102, 0, 0xffffffff81e00000ull, 0xffffffff81e00003ull));
	cpu0.push_back(rec(VTICE_REC_STEP_REGS, 0, 103, 1u << VTICE_STEP_REG_COUNT_SHIFT, 7));
	cpu1.push_back(rec(VTICE_REC_STEP, 1, 104, 0, 0xffffffff81e00003ull, 0xffffffff81e00007ull));
	cpu1.push_back(rec(VTICE_REC_STEP_MEM, 1, 105, VTICE_STEP_MEM_READ, 0xffff888000001000ull, 9));
	cpu1.push_back(rec(VTICE_REC_TRACE_STOP, 1, 106, VTICE_TRACE_STOP_MAX_INSNS, kTask, 2));
	c.feed({cpu1, cpu0});
	auto calls = c.finish();
	ASSERT_EQ(calls.size(), 1u);
	std::vector<uint64_t> stamps;
	for (const auto &r : calls[0].steps)
		stamps.push_back(r.tsc);
	EXPECT_EQ(stamps, (std::vector<uint64_t>{102, 103, 104, 105}));
	for (const auto &r : calls[0].records)
		EXPECT_TRUE(r.type == VTICE_REC_BRANCH || r.type == VTICE_REC_LOST) << "type " << r.type;
	EXPECT_EQ(calls[0].insns, 2u);
}
