// vtice doctor's comparison of a hypervisor trace with the kernel's ftrace.
// The fixtures are one real pair from the Bochs demo scenario (Debian 6.1):
// the kernel's function_graph of openat("/proc/version") and vtice's graph
// of the same call. The expected counts are those of the rig's Python
// comparison (tests/hypervisor/host/trace_compare.py), a separate
// implementation; the small cases are written by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "doctor/graph_calls.hpp"

namespace vtice::console::doctor {
namespace {

std::string fixture(const char *name)
{
	std::ifstream in(std::string(VTICE_TEST_DATA) + "/console/data/" + name);
	std::stringstream text;
	text << in.rdbuf();
	return text.str();
}

TEST(DoctorGraphCalls, RealFtraceAndVticeGraphsOfOneOpenatAgree)
{
	auto oracles = ftrace_calls(fixture("openat-6.1.ftrace"), "do_sys_openat2");
	auto ours = vtice_calls(fixture("openat-6.1.vtice-graph"));
	// The second is the tracefs open of the recorder's own tracing_on write,
	// which ftrace_openats() no longer records; this fixture is older.
	ASSERT_EQ(oracles.size(), 2u);
	const auto &oracle = oracles[0];
	ASSERT_EQ(oracle.size(), 116u);
	EXPECT_EQ(oracle.front(), "do_sys_openat2");
	EXPECT_EQ(oracle[2], "getname_flags.part.0");
	// The Python comparison also counts "x456ecd" from the user address
	// 0x456ecd() the graph starts in; an address is not a call here.
	EXPECT_EQ(ours.size(), 163u);
	EXPECT_EQ(ours.front(), "entry_SYSCALL_64");
	GraphMatch match = match_calls(oracle, ours);
	EXPECT_EQ(match.matched, 116u);
	EXPECT_TRUE(match.missing.empty());
}

TEST(DoctorGraphCalls, ACallTheTraceMissedIsNamed)
{
	std::string graph = fixture("openat-6.1.vtice-graph");
	std::string without;
	std::istringstream lines(graph);
	for (std::string line; std::getline(lines, line);)
		if (line.find("expand_files") == std::string::npos)
			without += line + "\n";
	GraphMatch match = closest_match(ftrace_calls(fixture("openat-6.1.ftrace"), "do_sys_openat2"),
					 vtice_calls(without));
	EXPECT_EQ(match.matched, match.total - 1);
	ASSERT_EQ(match.missing.size(), 1u);
	EXPECT_EQ(match.missing[0], "expand_files");
}

TEST(DoctorGraphCalls, InterruptsAndTheSchedulerAreLeftOut)
{
	const char ftrace[] =
		" 0)               |  do_sys_openat2() {\n"
		" 0)   0.500 us    |    getname();\n"
		" 0)               |    irq_enter_rcu() {\n"
		" 0)   0.100 us    |      irqtime_account_irq();\n"
		" 0)   0.300 us    |    }\n"
		" 0)   0.200 us    |    hrtimer_interrupt();\n"
		" 0)               |    irq_exit_rcu() {\n"
		" 0)   0.100 us    |      idle_cpu();\n"
		" 0)   0.300 us    |    }\n"
		" 0)               |    __cond_resched() {\n"
		" 0)   1.000 us    |      __schedule();\n"
		" 0)   2.000 us    |    }\n"
		" ------------------------------------------\n"
		" 0)   vtopen-1    =>    <idle>-0   \n"
		" 0)   0.500 us    |    fd_install();\n"
		" 0) + 20.000 us   |  }\n"
		" 0)   0.500 us    |  do_sys_openat2();\n";
	std::vector<std::string> want = {"do_sys_openat2", "getname", "fd_install"};
	EXPECT_EQ(ftrace_calls(ftrace, "do_sys_openat2"), std::vector<std::vector<std::string>>{want});

	const char vtice[] =
		"# CPU  DURATION      FUNCTION CALLS\n"
		"  1)               |  0x456ecd() { /* already running */\n"
		"  1)               |    do_sys_openat2() {\n"
		"  1)               |      ==========> interrupted at getname+0x12\n"
		"  1)               |      asm_sysvec_apic_timer_interrupt() {\n"
		"  1)       5419 cy |        native_apic_mem_write();\n"
		"  1)               |      } /* asm_sysvec_apic_timer_interrupt */\n"
		"  1)               |      <========== back at getname+0x12\n"
		"  1)        120 cy |      getname();\n"
		"  1)        120 cy |      fd_install();\n"
		"  1)       1000 cy |    } /* do_sys_openat2 */\n";
	EXPECT_EQ(vtice_calls(vtice), want);
}

// The oracle records several calls; a slab refill in one (___slab_alloc)
// is not a call the trace missed when another call took the fast path.
TEST(DoctorGraphCalls, TheTraceIsComparedWithTheClosestOracleCall)
{
	const char ftrace[] =
		" 0)               |  do_sys_openat2() {\n"
		" 0)               |    kmem_cache_alloc() {\n"
		" 0)   0.500 us    |      ___slab_alloc();\n"
		" 0)   0.900 us    |    }\n"
		" 0)   0.500 us    |    fd_install();\n"
		" 0) + 20.000 us   |  }\n"
		" 0)               |  do_sys_openat2() {\n"
		" 0)   0.200 us    |    kmem_cache_alloc();\n"
		" 0)   0.500 us    |    fd_install();\n"
		" 0) + 10.000 us   |  }\n"
		" 0)               |  do_sys_openat2() {\n"
		" 0)   0.200 us    |    kmem_cache_alloc();\n";	// cut off: not an oracle
	auto oracles = ftrace_calls(ftrace, "do_sys_openat2");
	ASSERT_EQ(oracles.size(), 2u);
	EXPECT_EQ(oracles[0].size(), 4u);
	EXPECT_EQ(oracles[1].size(), 3u);
	std::vector<std::string> fast = {"do_sys_openat2", "kmem_cache_alloc", "fd_install"};
	GraphMatch match = closest_match(oracles, fast);
	EXPECT_EQ(match.total, 3u);
	EXPECT_EQ(match.matched, 3u);
	EXPECT_TRUE(match.missing.empty());
	GraphMatch first_only = match_calls(oracles[0], fast);
	ASSERT_EQ(first_only.missing.size(), 1u);
	EXPECT_EQ(first_only.missing[0], "___slab_alloc");
}

TEST(DoctorGraphCalls, NothingToCompareIsNoMatch)
{
	EXPECT_EQ(match_calls({}, {"a"}).score(), 0.0);
	EXPECT_EQ(closest_match({}, {"a"}).score(), 0.0);
	EXPECT_TRUE(ftrace_calls("no graph here\n", "do_sys_openat2").empty());
	GraphMatch huge = match_calls({"a", "b"}, {"a", "b"}, 4);
	EXPECT_EQ(huge.matched, 0u);
	ASSERT_EQ(huge.missing.size(), 1u);
	EXPECT_NE(huge.missing[0].find("too large"), std::string::npos);
}

}  // namespace
}  // namespace vtice::console::doctor
