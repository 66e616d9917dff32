// What VMX root reads of this CPU's local APIC (hypervisor/core/apic.c):
// whether its timer can still interrupt it, for the stub's lockup watch.
// Register layout: SDM Vol. 3A 11.5.1 (LVT mask, bit 16), 11.9 (spurious-
// vector register, APIC software enable, bit 8), 11.12.1.2 (x2APIC MSRs).
// The xAPIC page is read through root's uncached window, which the fake
// CPU cannot back: Bochs runs that path (its APIC is in xAPIC mode).
#include <gtest/gtest.h>

#include "hv_fixture.hpp"

using namespace vtice::fake;

namespace {

class ApicTimer : public HvFixture {
protected:
	void SetUp() override
	{
		HvFixture::SetUp();
		virtualize();
		ASSERT_TRUE(vcpu.x2apic);
	}
};

TEST_F(ApicTimer, AnUnmaskedTimerOnAnEnabledApicIsLive)
{
	EXPECT_TRUE(vt_apic_timer_live(&vcpu));
}

TEST_F(ApicTimer, AMaskedTimerLvtIsNot)
{
	cpu().msrs[MSR_X2APIC_LVTT] |= 1u << 16;
	EXPECT_FALSE(vt_apic_timer_live(&vcpu));
}

TEST_F(ApicTimer, ASoftwareDisabledApicIsNot)
{
	cpu().msrs[MSR_X2APIC_SPIV] &= ~(1u << 8);
	EXPECT_FALSE(vt_apic_timer_live(&vcpu));
}

// No false lockup from an APIC root cannot read.
TEST_F(ApicTimer, AnUnreadableApicCountsAsLive)
{
	cpu().msrs.erase(MSR_X2APIC_LVTT);
	cpu().msrs[MSR_X2APIC_SPIV] = 0;
	EXPECT_TRUE(vt_apic_timer_live(&vcpu));
}

}  // namespace
