// The last-branch stack read as a stream (debug/lbr_stream.c) on a fake
// Skylake: 32 entries at MSR_LBR_NHM_FROM/TO, format 5 (LBR_INFO), TOS
// naming the most recent entry and moving by one per branch (SDM Vol. 3B
// 18.4.8). Expected values are the branches the test makes the CPU record.
#include "lbr_seed.hpp"

extern "C" {
#include "lbr_stream.h"
}

using namespace vtice::fake;

namespace {

class LbrStream : public ::testing::Test {
protected:
	vt_lbr_model m{};
	vt_lbr_mark mark{};
	vtice_lbr_entry out[VTICE_LBR_MAX]{};
	bool wrapped = false;

	void SetUp() override
	{
		reset();
		seed_cpu(kSkylakeX, LBR_FORMAT_INFO);
		seed_stack(MSR_LBR_NHM_FROM, MSR_LBR_NHM_TO, 32, 31);
		vt_lbr_detect(&m, VTICE_CAP_DEBUGCTL_LBR);
		ASSERT_EQ(m.status, (uint32_t)VTICE_LBR_OK);
		vt_lbr_take_mark(&m, &mark);
	}

	u32 since() { return vt_lbr_since(&m, &mark, out, &wrapped); }
};

TEST_F(LbrStream, NothingRecordedNothingNew)
{
	EXPECT_EQ(since(), 0u);
	EXPECT_FALSE(wrapped);
}

TEST_F(LbrStream, TheNewBranchesOldestFirstThenNothing)
{
	record_branch(0xffffffff81001000ull, 0xffffffff81002000ull, 7);
	record_branch(0xffffffff81002010ull, 0xffffffff81003000ull, 9);
	ASSERT_EQ(since(), 2u);
	EXPECT_FALSE(wrapped);
	EXPECT_EQ(out[0].from, 0xffffffff81001000ull);
	EXPECT_EQ(out[0].to, 0xffffffff81002000ull);
	EXPECT_EQ(out[0].cycles, 7u) << "LBR_INFO's cycle count, format 5";
	EXPECT_EQ(out[1].from, 0xffffffff81002010ull);
	EXPECT_EQ(since(), 0u) << "the mark moved to now";
}

TEST_F(LbrStream, AStackThatWentRoundSaysSoAndKeepsTheNewest)
{
	for (uint64_t i = 0; i < 40; i++)
		record_branch(0xffffffff81000000ull + 16 * i, 0xffffffff82000000ull + 16 * i);
	ASSERT_EQ(since(), 32u);
	EXPECT_TRUE(wrapped);
	EXPECT_EQ(out[0].from, 0xffffffff81000000ull + 16 * 8) << "the oldest still there";
	EXPECT_EQ(out[31].from, 0xffffffff81000000ull + 16 * 39) << "the newest last";
}

TEST_F(LbrStream, ExactlyOnceRoundIsNotMistakenForNothing)
{
	for (uint64_t i = 0; i < 32; i++)
		record_branch(0xffffffff81000000ull + 16 * i, 0xffffffff82000000ull + 16 * i);
	EXPECT_EQ(since(), 32u) << "TOS is back where it was, but the entry changed";
	EXPECT_TRUE(wrapped);
}

TEST_F(LbrStream, AnUnreadableStackGivesNothingAndRetakesTheMark)
{
	cpu().msrs.erase(MSR_LBR_TOS);	// RDMSR #GP
	record_branch(1, 2);
	cpu().msrs.erase(MSR_LBR_TOS);
	vt_lbr_take_mark(&m, &mark);
	EXPECT_FALSE(mark.valid);
	EXPECT_EQ(since(), 0u);
}

}  // namespace
