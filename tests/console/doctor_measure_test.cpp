// How vtice doctor tells that the unload left every CPU bare: CPUID exits
// to a hypervisor on every CPU that runs one, so each CPU's CPUID must
// cost at most half what it did loaded. (CPUID.1's VMX bit cannot tell:
// vtice shows it as the kernel saw it at boot.)
#include <gtest/gtest.h>

#include <unistd.h>

#include "doctor/measure.hpp"

namespace vtice::console::doctor {
namespace {

TEST(DoctorCpuid, BackToBareWhenEveryCpuCostsAtMostHalfOfLoaded)
{
	EXPECT_TRUE(cpuid_back_to_bare({432, 430}, {70, 71}));	// Bochs, 2026-11-27
	EXPECT_TRUE(cpuid_back_to_bare({400}, {200}));
}

TEST(DoctorCpuid, NotBackWhileOneCpuStillCostsAsLoaded)
{
	EXPECT_FALSE(cpuid_back_to_bare({432, 430}, {70, 429}));
	EXPECT_FALSE(cpuid_back_to_bare({400}, {201}));
}

TEST(DoctorCpuid, ACpuNotMeasuredLoadedIsNotJudged)
{
	EXPECT_TRUE(cpuid_back_to_bare({0, 430}, {500, 70}));
}

TEST(DoctorCpuid, TheCpuListsMustMatch)
{
	EXPECT_FALSE(cpuid_back_to_bare({432, 430}, {70}));
}

TEST(DoctorCpuid, OneFigurePerConfiguredCpuEachAPositiveCost)
{
	auto cycles = cpuid_cycles_per_cpu();
	ASSERT_EQ(cycles.size(), static_cast<std::size_t>(sysconf(_SC_NPROCESSORS_CONF)));
	for (double c : cycles)
		EXPECT_GT(c, 0);
}

}  // namespace
}  // namespace vtice::console::doctor
