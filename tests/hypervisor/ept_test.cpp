// Identity EPT: page sizes, MTRR memory types, splitting (SDM 3C 29.3, 3A 11.11).
#include <gtest/gtest.h>

#include "fake_cpu.hpp"

extern "C" {
#include "ept.h"
}

using namespace vtice::fake;

namespace {

constexpr uint64_t GiB = 1ull << 30, MiB = 1ull << 20, KiB = 1ull << 10;

struct Leaf {
	int level = 0;
	uint64_t entry = 0;
	bool mapped = false;
	uint8_t type() const { return (entry >> 3) & 7; }
	uint64_t pa() const { return entry & VMX_EPT_ADDR_MASK; }
};

Leaf leaf(const vt_ept &ept, uint64_t gpa)
{
	Leaf l;
	u64 *e = vt_ept_leaf(&ept, gpa, &l.level);
	if (e) {
		l.mapped = true;
		l.entry = *e;
	}
	return l;
}

// A PC-like MTRR setup: WB default; below 1 MiB WB RAM, UC VGA hole at
// A0000-BFFFF, WP ROM at C0000-FFFFF; variable: UC 3-4 GiB (PCI hole),
// WC 256 MiB frame buffer at 0xd0000000 overlapping it (UC wins), and a
// WT 2 MiB range inside WB RAM at 64 MiB.
vt_mtrr_state pc_mtrrs()
{
	reset();
	auto &c = cpu();
	c.cpuid[{1, 0}] = {0, 0, 0, 1u << 12};	// CPUID.1:EDX.MTRR
	c.cpuid[{0x80000000, 0}] = {0x80000008, 0, 0, 0};
	c.cpuid[{0x80000008, 0}] = {39, 0, 0, 0};
	c.msrs[MSR_MTRRcap] = 0x508;
	c.msrs[MSR_MTRRdefType] = MTRR_DEF_TYPE_E | MTRR_DEF_TYPE_FE | MTRR_TYPE_WRBACK;
	c.msrs[MSR_MTRRfix64K_00000] = 0x0606060606060606ull;
	c.msrs[MSR_MTRRfix16K_80000] = 0x0606060606060606ull;
	c.msrs[MSR_MTRRfix16K_A0000] = 0;	// A0000-BFFFF UC
	for (uint32_t i = 0; i < 8; i++)
		c.msrs[MSR_MTRRfix4K_C0000 + i] = 0x0505050505050505ull;	// WP
	const uint64_t mask39 = ((1ull << 39) - 1) & ~0xfffull;
	auto var = [&](uint32_t n, uint64_t base, uint64_t size, uint8_t type) {
		c.msrs[MSR_MTRRphysBase0 + 2 * n] = base | type;
		c.msrs[MSR_MTRRphysMask0 + 2 * n] = (~(size - 1) & mask39) | MTRR_PHYSMASK_V;
	};
	var(0, 3 * GiB, GiB, MTRR_TYPE_UNCACHABLE);
	var(1, 0xd0000000ull, 256 * MiB, MTRR_TYPE_WRCOMB);
	var(2, 64 * MiB, 2 * MiB, MTRR_TYPE_WRTHROUGH);
	for (uint32_t n = 3; n < 8; n++) {
		c.msrs[MSR_MTRRphysBase0 + 2 * n] = 0;
		c.msrs[MSR_MTRRphysMask0 + 2 * n] = 0;
	}
	vt_mtrr_state s{};
	vt_mtrr_read(&s);
	return s;
}

// 0xf0106334141 = Bochs's IA32_VMX_EPT_VPID_CAP (2M, 1G, A/D, WB, 4-level)
constexpr uint64_t kCapBochs = 0xf0106334141ull;
constexpr uint64_t kCapNo1G = kCapBochs & ~VMX_EPT_1GB_PAGE_BIT & ~VMX_EPT_AD_BIT;

}  // namespace

TEST(Mtrr, RangeTypes)
{
	vt_mtrr_state s = pc_mtrrs();
	EXPECT_EQ(vt_mtrr_range_type(&s, 0, 4 * KiB), MTRR_TYPE_WRBACK);
	EXPECT_EQ(vt_mtrr_range_type(&s, 0xa0000, 4 * KiB), MTRR_TYPE_UNCACHABLE);
	EXPECT_EQ(vt_mtrr_range_type(&s, 0xc0000, 4 * KiB), MTRR_TYPE_WRPROT);
	EXPECT_EQ(vt_mtrr_range_type(&s, 0, 2 * MiB), MTRR_TYPE_INVALID) << "fixed ranges mix";
	EXPECT_EQ(vt_mtrr_range_type(&s, 64 * MiB, 2 * MiB), MTRR_TYPE_WRTHROUGH);
	EXPECT_EQ(vt_mtrr_range_type(&s, 0, GiB), MTRR_TYPE_INVALID);
	EXPECT_EQ(vt_mtrr_range_type(&s, GiB, GiB), MTRR_TYPE_WRBACK);
	// UC overlapping WC: UC wins (SDM 3A 11.11.4.1)
	EXPECT_EQ(vt_mtrr_range_type(&s, 0xd0000000ull, 2 * MiB), MTRR_TYPE_UNCACHABLE);
	EXPECT_EQ(vt_mtrr_range_type(&s, 3 * GiB, GiB), MTRR_TYPE_INVALID)
		<< "WC range covers part of it";
	EXPECT_EQ(vt_mtrr_range_type(&s, 3 * GiB, 2 * MiB), MTRR_TYPE_UNCACHABLE);
	EXPECT_EQ(vt_mtrr_range_type(&s, 8 * GiB, GiB), MTRR_TYPE_WRBACK);
}

TEST(Mtrr, WriteThroughBeatsWriteBack)
{
	vt_mtrr_state s = pc_mtrrs();
	s.var[3].base = 0 | MTRR_TYPE_WRBACK;		// WB 0-4 GiB overlapping WT at 64 MiB
	s.var[3].mask = (~(4 * GiB - 1) & s.phys_mask) | MTRR_PHYSMASK_V;
	EXPECT_EQ(vt_mtrr_range_type(&s, 64 * MiB, 2 * MiB), MTRR_TYPE_WRTHROUGH);
}

TEST(Mtrr, DisabledMeansUncacheable)
{
	vt_mtrr_state s = pc_mtrrs();
	s.def_type &= ~MTRR_DEF_TYPE_E;
	EXPECT_EQ(vt_mtrr_range_type(&s, GiB, GiB), MTRR_TYPE_UNCACHABLE);
}

TEST(Ept, IdentityWithOneGigPages)
{
	vt_mtrr_state s = pc_mtrrs();
	vt_ept ept{};
	ASSERT_EQ(vt_ept_build(&ept, kCapBochs, &s, 512 * GiB), 0);
	EXPECT_EQ(ept.top, 512 * GiB);
	// EPTP: WB (6), 4-level walk (3 << 3), PML4 address; A/D (bit 6) off
	// though the CPU has it: with it on, every guest page walk would count
	// as a write to the page tables' frames (SDM 3C 29.3.3.2)
	ASSERT_TRUE(kCapBochs & VMX_EPT_AD_BIT);
	EXPECT_EQ(ept.eptp & 0xfff, 6u | (3u << 3));
	EXPECT_EQ(ept.eptp & VMX_EPT_ADDR_MASK, reinterpret_cast<uint64_t>(ept.pml4));

	struct Case {
		uint64_t gpa;
		int level;
		uint8_t type;
	} cases[] = {
		{0x1234, VT_EPT_LEVEL_PTE, MTRR_TYPE_WRBACK},
		{0xa0000, VT_EPT_LEVEL_PTE, MTRR_TYPE_UNCACHABLE},
		{0xc0000, VT_EPT_LEVEL_PTE, MTRR_TYPE_WRPROT},
		{0x100000, VT_EPT_LEVEL_PTE, MTRR_TYPE_WRBACK},	// rest of the first 2 MiB
		{0x200000, VT_EPT_LEVEL_PDE, MTRR_TYPE_WRBACK},
		{64 * MiB + 5, VT_EPT_LEVEL_PDE, MTRR_TYPE_WRTHROUGH},
		{GiB + 0x123456, VT_EPT_LEVEL_PDPTE, MTRR_TYPE_WRBACK},
		{3 * GiB, VT_EPT_LEVEL_PDE, MTRR_TYPE_UNCACHABLE},
		{0xd0000000ull, VT_EPT_LEVEL_PDE, MTRR_TYPE_UNCACHABLE},
		{0xfee00000ull, VT_EPT_LEVEL_PDE, MTRR_TYPE_UNCACHABLE},	// local APIC
		{100 * GiB, VT_EPT_LEVEL_PDPTE, MTRR_TYPE_WRBACK},
	};
	for (const auto &c : cases) {
		Leaf l = leaf(ept, c.gpa);
		ASSERT_TRUE(l.mapped) << std::hex << c.gpa;
		EXPECT_EQ(l.level, c.level) << std::hex << c.gpa;
		EXPECT_EQ(l.type(), c.type) << std::hex << c.gpa;
		EXPECT_EQ(l.entry & 7, 7u) << "RWX";
		EXPECT_FALSE(l.entry & VMX_EPT_IPAT_BIT) << "guest PAT must still apply";
		uint64_t size = 1ull << (12 + 9 * (l.level - 1));
		EXPECT_EQ(l.pa(), c.gpa & ~(size - 1)) << "identity";
	}
	EXPECT_FALSE(leaf(ept, 512 * GiB).mapped);
	vt_ept_free(&ept);
	EXPECT_EQ(live_allocations(), 0u);
}

TEST(Ept, TwoMegPagesOnlyAndCappedAt512G)
{
	vt_mtrr_state s = pc_mtrrs();
	vt_ept ept{};
	ASSERT_EQ(vt_ept_build(&ept, kCapNo1G, &s, 1ull << 46), 0);
	EXPECT_EQ(ept.top, 512 * GiB);
	Leaf l = leaf(ept, GiB + 0x123456);
	EXPECT_EQ(l.level, VT_EPT_LEVEL_PDE);
	EXPECT_EQ(l.pa(), GiB);
	// 1 PML4 + 1 PDPT + 512 PDs + 1 PT (first 2 MiB)
	EXPECT_EQ(ept.tables, 515u);
	vt_ept_free(&ept);
	EXPECT_EQ(live_allocations(), 0u);
}

TEST(Ept, BeyondOneTableOfPdpts)
{
	vt_mtrr_state s = pc_mtrrs();
	vt_ept ept{};
	ASSERT_EQ(vt_ept_build(&ept, kCapBochs, &s, 1ull << 40), 0);
	Leaf l = leaf(ept, 700 * GiB);
	EXPECT_EQ(l.level, VT_EPT_LEVEL_PDPTE);
	EXPECT_EQ(l.pa(), 700 * GiB);
	vt_ept_free(&ept);
}

TEST(Ept, RequiresWriteBackAndFourLevels)
{
	vt_mtrr_state s = pc_mtrrs();
	vt_ept ept{};
	EXPECT_EQ(vt_ept_build(&ept, kCapBochs & ~VMX_EPTP_WB_BIT, &s, GiB), -VT_EOPNOTSUPP);
	EXPECT_EQ(vt_ept_build(&ept, kCapBochs & ~VMX_EPT_PAGE_WALK_4_BIT, &s, GiB), -VT_EOPNOTSUPP);
	EXPECT_EQ(live_allocations(), 0u);
}

TEST(Ept, AllocationFailureFreesEverything)
{
	for (int n : {0, 1, 2, 3, 10}) {
		vt_mtrr_state s = pc_mtrrs();
		vt_ept ept{};
		fail_allocation_after(n);
		EXPECT_EQ(vt_ept_build(&ept, kCapBochs, &s, 8 * GiB), -VT_ENOMEM) << n;
		EXPECT_EQ(live_allocations(), 0u) << "after failing allocation " << n;
	}
}

TEST(Ept, SplitOneGigToFourKiB)
{
	vt_mtrr_state s = pc_mtrrs();
	vt_ept ept{};
	ASSERT_EQ(vt_ept_build(&ept, kCapBochs, &s, 16 * GiB), 0);
	uint64_t gpa = 5 * GiB + 0x345678;
	uint32_t pool = ept.pool_left;
	ASSERT_EQ(leaf(ept, gpa).level, VT_EPT_LEVEL_PDPTE);
	ASSERT_EQ(vt_ept_split_4k(&ept, gpa), 0);
	EXPECT_EQ(ept.pool_left, pool - 2) << "one PD and one PT from the pool";
	Leaf l = leaf(ept, gpa);
	EXPECT_EQ(l.level, VT_EPT_LEVEL_PTE);
	EXPECT_EQ(l.pa(), gpa & ~0xfffull);
	EXPECT_EQ(l.type(), MTRR_TYPE_WRBACK);
	EXPECT_EQ(l.entry & 7, 7u);
	// neighbours keep the identity map at their new sizes
	EXPECT_EQ(leaf(ept, gpa + 4 * KiB).pa(), (gpa & ~0xfffull) + 4 * KiB);
	Leaf other2m = leaf(ept, 5 * GiB + 10 * MiB);
	EXPECT_EQ(other2m.level, VT_EPT_LEVEL_PDE);
	EXPECT_EQ(other2m.pa(), 5 * GiB + 10 * MiB);
	EXPECT_TRUE(other2m.entry & VMX_EPT_LARGE_PAGE);
	// splitting again is a no-op
	ASSERT_EQ(vt_ept_split_4k(&ept, gpa), 0);
	EXPECT_EQ(ept.pool_left, pool - 2);
	vt_ept_free(&ept);
	EXPECT_EQ(live_allocations(), 0u);
}

TEST(Ept, SplitKeepsUncacheableType)
{
	vt_mtrr_state s = pc_mtrrs();
	vt_ept ept{};
	ASSERT_EQ(vt_ept_build(&ept, kCapBochs, &s, 16 * GiB), 0);
	ASSERT_EQ(vt_ept_split_4k(&ept, 0xfee00000ull), 0);
	Leaf l = leaf(ept, 0xfee00000ull);
	EXPECT_EQ(l.level, VT_EPT_LEVEL_PTE);
	EXPECT_EQ(l.type(), MTRR_TYPE_UNCACHABLE);
	vt_ept_free(&ept);
}

TEST(Ept, SplitPoolExhaustion)
{
	vt_mtrr_state s = pc_mtrrs();
	vt_ept ept{};
	ASSERT_EQ(vt_ept_build(&ept, kCapBochs, &s, 64 * GiB), 0);
	int ok = 0, ret = 0;
	for (uint64_t g = 8; g < 64 && ret == 0; g++) {
		ret = vt_ept_split_4k(&ept, g * GiB);
		ok += ret == 0;
	}
	EXPECT_EQ(ret, -VT_ENOMEM);
	EXPECT_EQ(ok, VT_EPT_POOL_PAGES / 2);
	EXPECT_EQ(vt_ept_split_4k(&ept, 600 * GiB), -VT_EINVAL) << "unmapped";
	vt_ept_free(&ept);
	EXPECT_EQ(live_allocations(), 0u);
}

TEST(Ept, AuditCountsLeavesThatAreNotIdentity)
{
	vt_mtrr_state s = pc_mtrrs();
	vt_ept ept{};
	ASSERT_EQ(vt_ept_build(&ept, kCapBochs, &s, 16 * GiB), 0);
	struct vt_ept_audit fresh{};
	vt_ept_audit_identity(&ept, &fresh);
	EXPECT_GT(fresh.leaves, 0u);
	EXPECT_EQ(fresh.off_identity, 0u) << "a freshly built EPT is identity with full rights";

	// Splitting 1 GiB -> 512 x 2 MiB -> one of them to 512 x 4 KiB keeps identity.
	uint64_t gpa = 5 * GiB + 0x345000;
	ASSERT_EQ(vt_ept_split_4k(&ept, gpa), 0);
	struct vt_ept_audit split{};
	vt_ept_audit_identity(&ept, &split);
	EXPECT_EQ(split.leaves, fresh.leaves - 1 + 511 + 512);
	EXPECT_EQ(split.small_leaves, fresh.small_leaves + 512);
	EXPECT_EQ(split.off_identity, 0u);

	int level = 0;
	u64 *leaf_entry = vt_ept_leaf(&ept, gpa, &level);
	ASSERT_NE(leaf_entry, nullptr);
	const u64 identity = *leaf_entry;
	struct vt_ept_audit seen{};
	*leaf_entry = identity & ~u64(VMX_EPT_WRITABLE_MASK);	// a write watchpoint
	vt_ept_audit_identity(&ept, &seen);
	EXPECT_EQ(seen.off_identity, 1u);
	*leaf_entry = identity & ~u64(VMX_EPT_RWX_MASK);	// an access watchpoint: no rights
	vt_ept_audit_identity(&ept, &seen);
	EXPECT_EQ(seen.off_identity, 1u) << "a leaf with no rights is still counted";
	EXPECT_EQ(seen.leaves, split.leaves);
	*leaf_entry = (identity & ~VMX_EPT_ADDR_MASK) | 0x1000;	// another frame, full rights
	vt_ept_audit_identity(&ept, &seen);
	EXPECT_EQ(seen.off_identity, 1u) << "a split view mapping a shadow frame";
	*leaf_entry = identity;
	vt_ept_audit_identity(&ept, &seen);
	EXPECT_EQ(seen.off_identity, 0u);
	vt_ept_free(&ept);
}
