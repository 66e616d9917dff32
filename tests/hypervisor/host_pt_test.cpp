// VMX root's private page tables (hypervisor/core/host_pt.h): mirrored
// ranges translate as the kernel's tables did at load, through tables of
// root's own; nothing else is mapped; later changes to the kernel's tables
// do not reach root; the window sits in a slot the kernel leaves empty.
// The oracle is a page walk written here from SDM Vol. 3A 4.5 (4-level).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "fake_cpu.hpp"

extern "C" {
#include "ept.h"
#include "host_pt.h"
#include "hv.h"
}

using namespace vtice::fake;

namespace {

constexpr uint64_t kP = 1, kRw = 2, kPs = 0x80, kG = 0x100, kNx = 1ull << 63;
constexpr uint64_t kAddr = 0x000ffffffffff000ull;

uint64_t va_of(uint64_t l4, uint64_t l3, uint64_t l2, uint64_t l1, uint64_t off = 0)
{
	uint64_t va = l4 << 39 | l3 << 30 | l2 << 21 | l1 << 12 | off;
	return va | (l4 >= 256 ? 0xffff000000000000ull : 0);
}

struct Translation {
	uint64_t pa, leaf_flags;
	bool operator==(const Translation &o) const { return pa == o.pa && leaf_flags == o.leaf_flags; }
};

// The SDM's 4-level walk (fake OS: table addresses are pointers).
std::optional<Translation> walk(const uint64_t *top, uint64_t va)
{
	const uint64_t *t = top;
	for (int level = 4; level >= 1; level--) {
		int shift = 12 + 9 * (level - 1);
		uint64_t e = t[(va >> shift) & 511];
		if (!(e & kP))
			return std::nullopt;
		if (level == 1 || (level <= 3 && (e & kPs))) {
			uint64_t size = 1ull << shift;
			return Translation{(e & kAddr & ~(size - 1)) | (va & (size - 1)), e & ~kAddr};
		}
		t = reinterpret_cast<const uint64_t *>(e & kAddr);
	}
	return std::nullopt;
}

// Every table page reachable from top (top included).
void tables_of(const uint64_t *top, int level, std::set<const void *> &out)
{
	out.insert(top);
	if (level == 1)
		return;
	for (int i = 0; i < 512; i++) {
		uint64_t e = top[i];
		if ((e & kP) && !(e & kPs))
			tables_of(reinterpret_cast<const uint64_t *>(e & kAddr), level - 1, out);
	}
}

class HostPt : public ::testing::Test {
protected:
	std::vector<uint64_t *> kernel_tables;
	uint64_t *ktop = nullptr, *kpdpt = nullptr, *kpd = nullptr, *kpt = nullptr;
	vt_hv hv{};
	bool hv_up = false;

	uint64_t *table()
	{
		auto *t = static_cast<uint64_t *>(std::aligned_alloc(4096, 4096));
		std::memset(t, 0, 4096);
		kernel_tables.push_back(t);
		return t;
	}

	// A kernel with a 1 GiB leaf, a 2 MiB leaf and a PTE table with a hole,
	// all under slot 273, and an unrelated mapping under slot 300.
	void SetUp() override
	{
		reset();
		seed_vmx(bochs_skylake_x);
		ktop = table();
		kpdpt = table();
		kpd = table();
		kpt = table();
		ktop[273] = reinterpret_cast<uint64_t>(kpdpt) | kP | kRw | 0x20;
		kpdpt[0] = 0x40000000ull | kP | kRw | kPs | kG | kNx;
		kpdpt[1] = reinterpret_cast<uint64_t>(kpd) | kP | kRw;
		kpd[0] = 0x80000000ull | kP | kPs | kG;		// read-only, executable 2 MiB
		kpd[1] = reinterpret_cast<uint64_t>(kpt) | kP | kRw;
		for (int i = 0; i < 512; i++)
			if (i != 5)
				kpt[i] = (0x100000000ull + i * 0x3000ull) | kP | kRw | kG | kNx;
		auto *other = table();
		ktop[300] = reinterpret_cast<uint64_t>(other) | kP | kRw;
		other[0] = 0xc0000000ull | kP | kRw | kPs;
		cpu().cr3 = reinterpret_cast<uint64_t>(ktop) | 0x5;	// a PCID in bits 11:0
		// 48 physical address bits: the EPT covers the heap the fake OS's
		// pages come from (virt == phys), so the shield can hide them.
		cpu().cpuid[{0x80000008, 0}] = {0x3030, 0, 0, 0};
		ASSERT_EQ(vt_hv_init(&hv, 0), 0);
		hv_up = true;
	}

	void TearDown() override
	{
		if (hv_up)
			vt_hv_fini(&hv);
		EXPECT_EQ(live_allocations(), 0u) << "pages leaked";
		for (auto *t : kernel_tables)
			std::free(t);
	}

	const uint64_t *ours() const { return static_cast<const uint64_t *>(hv.host_pml4); }
};

TEST_F(HostPt, StartsEmptyButForTheWindowInASlotTheKernelLeavesEmpty)
{
	int used = 0;
	for (int i = 0; i < 512; i++)
		used += (ours()[i] & kP) != 0;
	EXPECT_EQ(used, 1) << "only the window";
	EXPECT_EQ(ktop[256], 0u);
	EXPECT_EQ(ours()[256] & kAddr, reinterpret_cast<uint64_t>(hv.window.tables[0]));
	EXPECT_EQ(hv.host_cr3, reinterpret_cast<uint64_t>(hv.host_pml4));
	EXPECT_EQ(hv.host_levels, 4u);
}

TEST_F(HostPt, TheWindowAvoidsSlotsTheKernelUses)
{
	vt_hv_fini(&hv);
	for (int i = 256; i < 262; i++)
		ktop[i] = reinterpret_cast<uint64_t>(kpdpt) | kP;
	ASSERT_EQ(vt_hv_init(&hv, 0), 0);
	EXPECT_EQ(ours()[262] & kAddr, reinterpret_cast<uint64_t>(hv.window.tables[0]));
	EXPECT_EQ(hv.window.base, va_of(262, 0, 0, 0));
}

TEST_F(HostPt, AMirroredRangeTranslatesAsTheKernelsDid)
{
	// From inside the 1 GiB leaf to past the end of the PTE table.
	uint64_t start = va_of(273, 0, 3, 7), end = va_of(273, 1, 2, 0);
	ASSERT_EQ(vt_host_pt_mirror(&hv, start, end - start), 0);
	for (uint64_t va = start; va < end; va += 0x1000) {
		auto k = walk(ktop, va), o = walk(ours(), va);
		ASSERT_EQ(k.has_value(), o.has_value()) << std::hex << va;
		if (k) {
			ASSERT_TRUE(*k == *o) << std::hex << va;
		}
	}
	EXPECT_FALSE(walk(ours(), va_of(273, 1, 1, 5))) << "the kernel's hole stays a hole";
	EXPECT_EQ(walk(ours(), va_of(273, 1, 1, 6))->pa, 0x100000000ull + 6 * 0x3000ull);
	EXPECT_EQ(walk(ours(), va_of(273, 1, 0, 0, 0x1234))->pa, 0x80001234ull) << "2 MiB leaf";
}

TEST_F(HostPt, NothingOutsideTheRangesIsMapped)
{
	ASSERT_EQ(vt_host_pt_mirror(&hv, va_of(273, 1, 1, 10), 3 * 4096), 0);
	EXPECT_TRUE(walk(ours(), va_of(273, 1, 1, 12)));
	EXPECT_FALSE(walk(ours(), va_of(273, 1, 1, 13)));
	EXPECT_FALSE(walk(ours(), va_of(273, 1, 1, 9)));
	EXPECT_FALSE(walk(ours(), va_of(273, 0, 0, 0))) << "the 1 GiB leaf was not asked for";
	EXPECT_FALSE(walk(ours(), va_of(300, 0, 0, 0)));
	EXPECT_TRUE(walk(ktop, va_of(300, 0, 0, 0)));
}

TEST_F(HostPt, EveryTableIsRootsOwn)
{
	ASSERT_EQ(vt_host_pt_mirror(&hv, va_of(273, 0, 0, 0), 2ull << 30), 0);
	std::set<const void *> mine, kernels;
	tables_of(ours(), 4, mine);
	tables_of(ktop, 4, kernels);
	for (const void *t : mine)
		EXPECT_EQ(kernels.count(t), 0u) << t << " is the kernel's table";
}

// A hostile kernel rewrites its PTE for a page root runs after load: root's
// translation stays the one taken at load.
TEST_F(HostPt, TheKernelsLaterChangesDoNotReachRoot)
{
	uint64_t va = va_of(273, 1, 1, 3);
	ASSERT_EQ(vt_host_pt_mirror(&hv, va, 4096), 0);
	auto before = walk(ours(), va);
	kpt[3] = 0xdead000ull | kP | kRw;
	kpd[1] = reinterpret_cast<uint64_t>(table()) | kP | kRw;
	ktop[273] = 0;
	ASSERT_TRUE(walk(ours(), va));
	EXPECT_TRUE(*walk(ours(), va) == *before);
}

TEST_F(HostPt, OverlappingRangesShareRootsTables)
{
	ASSERT_EQ(vt_host_pt_mirror(&hv, va_of(273, 1, 1, 0), 8 * 4096), 0);
	std::set<const void *> first;
	tables_of(ours(), 4, first);
	ASSERT_EQ(vt_host_pt_mirror(&hv, va_of(273, 1, 1, 4), 8 * 4096), 0);
	std::set<const void *> second;
	tables_of(ours(), 4, second);
	EXPECT_EQ(first, second);
	EXPECT_TRUE(walk(ours(), va_of(273, 1, 1, 11)));
}

TEST_F(HostPt, TheGuestSeesNoneOfRootsTables)
{
	ASSERT_EQ(vt_host_pt_mirror(&hv, va_of(273, 0, 0, 0), 2ull << 30), 0);
	ASSERT_EQ(vt_host_pt_hide(&hv), 0);
	std::set<const void *> mine;
	tables_of(ours(), 4, mine);
	for (auto *t : hv.window.tables)
		if (t)
			mine.insert(t);
	EXPECT_EQ(mine.size(), 4u + 3u) << "top, PDPT, PD, PT; the window's three";
	for (const void *t : mine) {
		int level = 0;
		u64 *e = vt_ept_leaf(&hv.ept, vt_os_virt_to_phys(t), &level);
		ASSERT_NE(e, nullptr);
		EXPECT_EQ(*e & VMX_EPT_ADDR_MASK, hv.shield.decoy_pa) << t;
	}
}

TEST_F(HostPt, ARangeThatWrapsIsRefused)
{
	EXPECT_EQ(vt_host_pt_mirror(&hv, ~0ull - 4095, 8192), -VT_EINVAL);
}

TEST_F(HostPt, AnAllocationFailureIsReportedAndLeaksNothing)
{
	fail_allocation_after(1);	// the PDPT copy succeeds, the PD copy fails
	EXPECT_EQ(vt_host_pt_mirror(&hv, va_of(273, 1, 1, 0), 4096), -VT_ENOMEM);
	fail_allocation_after(-1);
	// fini frees what was made (TearDown checks for leaks)
}

}  // namespace
