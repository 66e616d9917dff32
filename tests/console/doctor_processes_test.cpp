// Where vtice doctor puts a trace's reader and its traced task: two
// different CPUs of those the process may use, as the kernel reports them
// (sched_getaffinity, and sched_getcpu in a pinned thread).
#include <gtest/gtest.h>

#include <sched.h>

#include <thread>

#include "doctor/processes.hpp"

namespace vtice::console::doctor {
namespace {

TEST(DoctorCpus, ReaderAndTaskGetTwoDifferentAllowedCpus)
{
	cpu_set_t allowed;
	ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	CpuPair pair = reader_and_task_cpus();
	if (CPU_COUNT(&allowed) < 2)
		GTEST_SKIP() << "one CPU here: nothing to keep apart";
	EXPECT_NE(pair.reader, pair.task);
	EXPECT_TRUE(CPU_ISSET(pair.reader, &allowed));
	EXPECT_TRUE(CPU_ISSET(pair.task, &allowed));
}

TEST(DoctorCpus, APinnedThreadRunsWhereItWasPut)
{
	CpuPair pair = reader_and_task_cpus();
	if (pair.task < 0)
		GTEST_SKIP() << "one CPU here";
	int ran_on = -1;
	bool pinned = false;
	std::thread([&] {
		pinned = pin_self_to(pair.task);
		ran_on = sched_getcpu();
	}).join();
	EXPECT_TRUE(pinned);
	EXPECT_EQ(ran_on, pair.task);
}

TEST(DoctorCpus, WithOneCpuAllowedThereIsNoPair)
{
	CpuPair pair;
	std::thread([&] {
		pin_self_to(0);
		pair = reader_and_task_cpus();
	}).join();
	EXPECT_EQ(pair.reader, -1);
	EXPECT_EQ(pair.task, -1);
}

}  // namespace
}  // namespace vtice::console::doctor
