// The shield (hypervisor/core/shield.h): hidden frames show the guest the
// decoy, copied frames a copy taken at shield time, and the EPT's own tables
// end up hidden, down to those that hiding them split off.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "fake_cpu.hpp"

extern "C" {
#include "hv.h"
}

using namespace vtice::fake;

namespace {

constexpr uint64_t kCapBochs = 0xf0106334141ull;	// 2M, 1G, A/D, WB, 4-level
constexpr uint64_t kPage = 4096;
// The fake OS's "physical" address of a page is its host pointer: an EPT
// up to 2^47 covers every heap page, so real allocations can be shielded.
constexpr uint64_t kTop = 1ull << 47;

struct ShieldTest : ::testing::Test {
	vt_mtrr_state mtrr{};
	vt_ept ept{};
	vt_shield shield{};

	void SetUp() override
	{
		reset();
		ASSERT_EQ(vt_ept_build(&ept, kCapBochs, &mtrr, kTop), 0);
		ASSERT_EQ(vt_shield_init(&shield), 0);
	}
	void TearDown() override
	{
		vt_ept_free(&ept);
		vt_shield_fini(&shield);
		EXPECT_EQ(live_allocations(), 0u);
	}
	uint64_t entry(uint64_t gpa)
	{
		int level = 0;
		u64 *e = vt_ept_leaf(&ept, gpa, &level);
		EXPECT_NE(e, nullptr);
		EXPECT_EQ(level, VT_EPT_LEVEL_PTE) << "shielded frames get 4 KiB leaves";
		return e ? *e : 0;
	}
};

uint64_t frame_of(uint64_t e)
{
	return e & VMX_EPT_ADDR_MASK;
}

int collect(void *ctx, u64 pa)
{
	static_cast<std::set<uint64_t> *>(ctx)->insert(pa);
	return 0;
}

}  // namespace

TEST_F(ShieldTest, HiddenFramesShowTheDecoyWithFullRightsAndTheirType)
{
	const uint64_t pa = 5ull << 30;	// inside a 1 GiB leaf: split down to 4 KiB
	int level = 0;
	const uint64_t type = (*vt_ept_leaf(&ept, pa, &level) >> VMX_EPT_MT_EPTE_SHIFT) & 7;
	ASSERT_EQ(level, VT_EPT_LEVEL_PDPTE);
	ASSERT_EQ(vt_shield_hide(&shield, &ept, pa, 3), 0);
	for (uint64_t i = 0; i < 3; i++) {
		uint64_t e = entry(pa + i * kPage);
		EXPECT_EQ(frame_of(e), shield.decoy_pa);
		EXPECT_EQ(e & VMX_EPT_RWX_MASK, VMX_EPT_RWX_MASK) << "no access may exit";
		EXPECT_EQ((e >> VMX_EPT_MT_EPTE_SHIFT) & 7, type) << "the frame's memory type";
		EXPECT_TRUE(e & VT_EPT_SHIELDED) << "marked, so no hook takes it over";
	}
	uint64_t next = entry(pa + 3 * kPage);
	EXPECT_EQ(frame_of(next), pa + 3 * kPage) << "the neighbour stays identity";
	EXPECT_FALSE(next & VT_EPT_SHIELDED);
	EXPECT_EQ(shield.hidden, 3u);
	vt_ept_audit audit;
	vt_ept_audit_identity(&ept, &audit);
	EXPECT_EQ(audit.shielded, 3u);
	EXPECT_EQ(audit.off_identity, 0u) << "shielded leaves are not a debugger's leftovers";
}

TEST_F(ShieldTest, HidingTwiceCountsOnceAndUnalignedIsRefused)
{
	ASSERT_EQ(vt_shield_hide(&shield, &ept, 1ull << 30, 2), 0);
	ASSERT_EQ(vt_shield_hide(&shield, &ept, (1ull << 30) + kPage, 2), 0);
	EXPECT_EQ(shield.hidden, 3u);
	EXPECT_EQ(vt_shield_hide(&shield, &ept, (1ull << 30) + 8, 1), -VT_EINVAL);
	EXPECT_EQ(vt_shield_hide(&shield, &ept, kTop, 1), -VT_EINVAL) << "beyond the EPT";
}

TEST_F(ShieldTest, CopiedFrameShowsTheBytesOfShieldTimeAndNotLaterOnes)
{
	auto *orig = static_cast<uint8_t *>(vt_os_alloc_pages(1));
	std::memset(orig, 0x90, kPage);
	const uint64_t pa = vt_os_virt_to_phys(orig);
	ASSERT_EQ(vt_shield_copy(&shield, &ept, pa), 0);
	uint64_t e = entry(pa);
	ASSERT_NE(frame_of(e), pa);
	ASSERT_NE(frame_of(e), shield.decoy_pa) << "a copy of its own, not the decoy";
	EXPECT_TRUE(e & VT_EPT_SHIELDED);
	orig[0] = 0xcc;	// VMX root changes the original
	auto *copy = static_cast<const uint8_t *>(vt_os_phys_to_virt(frame_of(e)));
	EXPECT_EQ(copy[0], 0x90) << "the guest's view keeps the bytes it had";
	EXPECT_EQ(copy[kPage - 1], 0x90);
	ASSERT_EQ(vt_shield_copy(&shield, &ept, pa), 0);
	EXPECT_EQ(shield.nr_copies, 1u) << "a frame is copied once";
	vt_os_free_pages(orig, 1);
}

// A stealth load (VTICE_VMCALL_STEALTH): what the copies showed is gone
// from the guest's view, the copies' bytes included.
TEST_F(ShieldTest, RetiredCopiesShowTheDecoyAndKeepNothing)
{
	auto *orig = static_cast<uint8_t *>(vt_os_alloc_pages(1));
	std::memset(orig, 0x90, kPage);
	const uint64_t pa = vt_os_virt_to_phys(orig);
	const uint64_t hidden_pa = 5ull << 30;
	ASSERT_EQ(vt_shield_copy(&shield, &ept, pa), 0);
	ASSERT_EQ(vt_shield_hide(&shield, &ept, hidden_pa, 1), 0);
	auto *copy = static_cast<const uint8_t *>(vt_os_phys_to_virt(frame_of(entry(pa))));
	const uint32_t hidden_before = shield.hidden;

	vt_shield_retire_copies(&shield, &ept);
	EXPECT_EQ(frame_of(entry(pa)), shield.decoy_pa);
	EXPECT_TRUE(entry(pa) & VT_EPT_SHIELDED);
	EXPECT_EQ(vt_shield_seen_pa(&ept, pa + 8), shield.decoy_pa + 8) << "root's reads for the guest follow";
	EXPECT_EQ(shield.hidden, hidden_before + 1);
	for (uint64_t i = 0; i < kPage; i++)
		ASSERT_EQ(copy[i], 0) << "the copy keeps no byte of the original, at " << i;
	EXPECT_EQ(orig[0], 0x90) << "VMX root's original is untouched";
	EXPECT_EQ(frame_of(entry(hidden_pa)), shield.decoy_pa) << "a hidden frame stays hidden";
	vt_shield_retire_copies(&shield, &ept);
	EXPECT_EQ(shield.hidden, hidden_before + 1) << "retiring twice changes nothing";
	vt_os_free_pages(orig, 1);
}

TEST_F(ShieldTest, EptTablesEndHiddenIncludingTheOnesHidingSplitOff)
{
	ASSERT_EQ(vt_shield_hide(&shield, &ept, 3ull << 30, 1), 0);
	const uint32_t tables_before = ept.tables;
	ASSERT_EQ(vt_shield_hide_ept(&shield, &ept), 0);
	EXPECT_GT(ept.tables, tables_before) << "hiding the tables split large leaves";
	std::set<uint64_t> tables;
	ASSERT_EQ(vt_ept_for_each_table(&ept, collect, &tables), 0);
	EXPECT_EQ(tables.size(), ept.tables + ept.pool_left);
	for (uint64_t pa : tables) {
		const uint64_t e = entry(pa);
		EXPECT_TRUE(e & VT_EPT_SHIELDED) << std::hex << pa;
		EXPECT_EQ(frame_of(e), shield.decoy_pa);
	}
	EXPECT_EQ(ept.pool_left, uint32_t(VT_EPT_POOL_PAGES)) << "the pool is full again";
}

// vt_own_mem goes where the guest's own accesses land: the decoy for a
// hidden frame, the copy for a copied one, the frame itself elsewhere.
TEST_F(ShieldTest, SeenAddressIsWhereTheGuestsAccessLands)
{
	auto *hidden = static_cast<uint8_t *>(vt_os_alloc_pages(1));
	auto *copied = static_cast<uint8_t *>(vt_os_alloc_pages(1));
	auto *open = static_cast<uint8_t *>(vt_os_alloc_pages(1));
	uint64_t h = vt_os_virt_to_phys(hidden), c = vt_os_virt_to_phys(copied), o = vt_os_virt_to_phys(open);
	ASSERT_EQ(vt_shield_hide(&shield, &ept, h, 1), 0);
	ASSERT_EQ(vt_shield_copy(&shield, &ept, c), 0);
	EXPECT_EQ(vt_shield_seen_pa(&ept, h + 0x123), shield.decoy_pa + 0x123);
	EXPECT_EQ(vt_shield_seen_pa(&ept, c + 0x10), frame_of(entry(c)) + 0x10);
	EXPECT_NE(frame_of(entry(c)), c) << "the copy is a frame of its own";
	EXPECT_EQ(vt_shield_seen_pa(&ept, o + 0x10), o + 0x10);
	vt_os_free_pages(hidden, 1);
	vt_os_free_pages(copied, 1);
	vt_os_free_pages(open, 1);
}

TEST_F(ShieldTest, OutOfMemoryIsAnErrorNotACrash)
{
	fail_allocation_after(0);
	auto *page = static_cast<uint8_t *>(std::aligned_alloc(kPage, kPage));
	EXPECT_EQ(vt_shield_copy(&shield, &ept, reinterpret_cast<uint64_t>(page)), -VT_ENOMEM);
	fail_allocation_after(-1);
	std::free(page);
}
