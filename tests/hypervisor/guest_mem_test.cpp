// The debugger's guest page walk (hypervisor/core/guest_mem.c) against
// page tables built here by hand from the SDM's formats (Vol. 3A 4.5,
// Tables 4-14..4-20): 4- and 5-level, 4 KiB / 2 MiB / 1 GiB pages, and the
// refusal to touch anything that is not RAM.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "guest_pages.hpp"

extern "C" {
#include "../../hypervisor/core/guest_mem.h"
#include "os.h"
}

namespace {


// Guest "physical memory" (guest_pages.hpp), with RAM below 64 MiB except
// a hole at [16 MiB, 17 MiB) that stands for MMIO.
class GuestMem : public ::testing::Test, protected vtice::fake::GuestPages {
protected:
	std::vector<vt_ram_range> ram{{0, 16ull << 20}, {17ull << 20, 64ull << 20}};
	vt_guest_mem m{};

	void SetUp() override
	{
		m.ram = ram.data();
		m.nr_ram = (u32)ram.size();
		m.ctx = static_cast<GuestPages *>(this);
		m.map = GuestPages::map_fn;
	}

	bool ram_touched_only()
	{
		for (auto pa : mapped)
			if (!vt_guest_is_ram(&m, pa))
				return false;
		return true;
	}
};

TEST_F(GuestMem, FourLevel4KPage)
{
	uint64_t root = new_table();
	map(root, 4, 0xffffffff81000000ull, 0x2345000);
	vt_paging pg{root, false};
	u64 gpa = 0;
	ASSERT_EQ(vt_guest_translate(&m, &pg, 0xffffffff81000abcull, &gpa), 0);
	EXPECT_EQ(gpa, 0x2345abcu);
}

TEST_F(GuestMem, LargePagesKeepTheLowBitsOfTheAddress)
{
	uint64_t root = new_table();
	map(root, 4, 0xffff888000000000ull, 0x0, 3);		// 1 GiB
	map(root, 4, 0xffffffff82000000ull, 0x1e00000, 2);	// 2 MiB
	vt_paging pg{root, false};
	u64 gpa = 0;
	ASSERT_EQ(vt_guest_translate(&m, &pg, 0xffff888001234567ull, &gpa), 0);
	EXPECT_EQ(gpa, 0x1234567u);
	ASSERT_EQ(vt_guest_translate(&m, &pg, 0xffffffff821fffffull, &gpa), 0);
	EXPECT_EQ(gpa, 0x1ffffffu);
}

TEST_F(GuestMem, FiveLevelPaging)
{
	uint64_t root = new_table();
	uint64_t gva = 0xff11000000401000ull;	// canonical for 57 bits
	map(root, 5, gva, 0x777000);
	vt_paging pg{root, true};
	u64 gpa = 0;
	ASSERT_EQ(vt_guest_translate(&m, &pg, gva + 8, &gpa), 0);
	EXPECT_EQ(gpa, 0x777008u);
	vt_paging four{root, false};
	EXPECT_EQ(vt_guest_translate(&m, &four, gva, &gpa), -VT_EFAULT)
		<< "not canonical with 48 bits";
}

TEST_F(GuestMem, UnmappedAndNonCanonicalAddressesFault)
{
	uint64_t root = new_table();
	vt_paging pg{root, false};
	u64 gpa = 0;
	EXPECT_EQ(vt_guest_translate(&m, &pg, 0xffffffff81000000ull, &gpa), -VT_EFAULT);
	EXPECT_EQ(vt_guest_translate(&m, &pg, 0x0000800000000000ull, &gpa), -VT_EFAULT);
}

TEST_F(GuestMem, ReadsAcrossPagesAndStopsShortAtTheFirstHole)
{
	uint64_t root = new_table();
	uint64_t va = 0xffffffffc0000000ull;
	map(root, 4, va, 0x300000);
	map(root, 4, va + 0x1000, 0x500000);
	std::memset(frame(0x300000) + 0xff0, 0xaa, 16);
	std::memset(frame(0x500000), 0xbb, 16);
	vt_paging pg{root, false};
	uint8_t buf[64];
	ASSERT_EQ(vt_guest_read(&m, &pg, va + 0xff0, buf, 32), 32);
	EXPECT_EQ(buf[15], 0xaa);
	EXPECT_EQ(buf[16], 0xbb);
	EXPECT_EQ(vt_guest_read(&m, &pg, va + 0x1ff0, buf, 64), 16)
		<< "short count: the page after is not mapped";
	EXPECT_EQ(vt_guest_read(&m, &pg, va + 0x2000, buf, 1), -VT_EFAULT);
}

TEST_F(GuestMem, NeverTouchesMmio)
{
	uint64_t root = new_table();
	uint64_t va = 0xffffc90000000000ull;
	map(root, 4, va, 16ull << 20);	// a mapping of the MMIO hole
	vt_paging pg{root, false};
	uint8_t buf[8];
	mapped.clear();
	EXPECT_EQ(vt_guest_read(&m, &pg, va, buf, 8), -VT_EFAULT);
	EXPECT_EQ(vt_guest_write(&m, &pg, va, buf, 8), -VT_EFAULT);
	EXPECT_TRUE(ram_touched_only());
}

TEST_F(GuestMem, PageTablesOutsideRamAreNotWalked)
{
	u64 gpa = 0;
	vt_paging pg{(16ull << 20) + 0x1000, false};	// CR3 in the MMIO hole
	mapped.clear();
	EXPECT_EQ(vt_guest_translate(&m, &pg, 0xffffffff81000000ull, &gpa), -VT_EFAULT);
	EXPECT_TRUE(mapped.empty());
}

TEST_F(GuestMem, WritesLandInTheGuestFrame)
{
	uint64_t root = new_table();
	uint64_t va = 0xffffffff81000000ull;
	map(root, 4, va, 0x400000);
	vt_paging pg{root, false};
	const uint8_t patch[] = {0xcc, 0x90};
	ASSERT_EQ(vt_guest_write(&m, &pg, va + 4, patch, 2), 2);
	EXPECT_EQ(frame(0x400000)[4], 0xcc);
	EXPECT_EQ(frame(0x400000)[5], 0x90);
}

// Linux with PTI: user-mode CR3 is the kernel's PGD + 4 KiB and maps no
// kernel text; a stop in user mode must still read the kernel.
TEST_F(GuestMem, PtiUserCr3FallsBackToTheKernelPageTables)
{
	next_table = 0x1ff000;	// the kernel PGD 8 KiB aligned, user copy above it
	uint64_t kernel_pgd = new_table();
	uint64_t user_pgd = new_table();
	ASSERT_EQ(user_pgd, kernel_pgd + 0x1000);
	map(kernel_pgd, 4, 0xffffffff81000000ull, 0x600000);
	vt_paging pg{user_pgd | 0x5 /* PCID */, false};
	u64 gpa = 0;
	ASSERT_EQ(vt_guest_translate(&m, &pg, 0xffffffff81000010ull, &gpa), 0);
	EXPECT_EQ(gpa, 0x600010u);
}

}  // namespace
