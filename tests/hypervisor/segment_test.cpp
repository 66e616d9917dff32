// Guest segment state from descriptors (SDM 3C 24.4.1, 3A 3.4.5, 7.2.3).
#include <gtest/gtest.h>

#include "fake_cpu.hpp"

extern "C" {
#include "segment.h"
}

using namespace vtice::fake;

namespace {
vt_segment read(uint16_t sel)
{
	vt_segment seg{};
	vt_segment_read(&cpu().gdt, sel, &seg);
	return seg;
}
}  // namespace

TEST(Segment, LinuxKernelCode64)
{
	reset();
	vt_segment s = read(0x10);	// 0x00af9b000000ffff
	EXPECT_EQ(s.ar, 0xa09bu) << "G, L, P, DPL0, code exec/read accessed";
	EXPECT_EQ(s.limit, 0xffffffffu);
	EXPECT_EQ(s.base, 0u);
}

TEST(Segment, LinuxKernelData)
{
	reset();
	vt_segment s = read(0x18);	// 0x00cf93000000ffff
	EXPECT_EQ(s.ar, 0xc093u);
	EXPECT_EQ(s.limit, 0xffffffffu);
}

TEST(Segment, UserDataWithRpl3)
{
	reset();
	vt_segment s = read(0x2b);
	EXPECT_EQ(s.ar, 0xc0f3u) << "DPL 3";
}

TEST(Segment, SixtyFourBitTss)
{
	reset();
	vt_segment s = read(0x40);
	EXPECT_EQ(s.base, 0xfffffe0000003000ull) << "base 63:32 from the descriptor's upper half";
	EXPECT_EQ(s.limit, 0x4087u);
	EXPECT_EQ(s.ar, 0x8bu) << "present, busy 64-bit TSS";
}

TEST(Segment, NullAndOutOfRangeAreUnusable)
{
	reset();
	EXPECT_EQ(read(0).ar, VMX_AR_UNUSABLE_MASK);
	EXPECT_EQ(read(3).ar, VMX_AR_UNUSABLE_MASK) << "null selector with RPL 3";
	EXPECT_EQ(read(0x400).ar, VMX_AR_UNUSABLE_MASK) << "beyond the GDT limit";
	EXPECT_EQ(read(0x38).ar, VMX_AR_UNUSABLE_MASK) << "not-present descriptor";
}
