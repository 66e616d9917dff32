// TSC offsetting (hypervisor/core/tsc_hide.c) on the fake CPU: what the
// guest reads and what the CPU is given, worked out from the SDM's rules
// (Vol. 3C 26.6.5 and 27.3: RDTSC, RDTSCP and RDMSR of IA32_TSC return
// TSC + offset; WRMSR to IA32_TSC and the local APIC's deadline compare
// act on the real counter), not from the code.
#include "hv_fixture.hpp"
#include <vtice/vmcall.h>

using namespace vtice::fake;

namespace {

constexpr uint32_t kTsc = 0x10, kDeadline = 0x6e0;

class TscHide : public HvFixture {
protected:
	void start()
	{
		ASSERT_EQ(init(), 0);
		ASSERT_EQ(vt_hv_enable_tsc_hiding(&hv), 0);
		ASSERT_EQ(vt_vcpu_virtualize(&vcpu), 0);
		guest_kernel_mode();
	}

	// The all-stop's part: the machine hides `cycles` more, and this CPU
	// takes it as it leaves the stop.
	void stop_hides(uint64_t cycles)
	{
		vt_tsc_hide_add(&hv, cycles);
		vt_tsc_hide_apply(&vcpu);
	}

	uint64_t guest_rdmsr(uint32_t msr)
	{
		vt_guest_regs r = msr_access(EXIT_REASON_MSR_READ, msr);
		return (r.rdx << 32) | (uint32_t)r.rax;
	}

	bool faulted() { return entry_event() != 0; }
};

TEST_F(TscHide, OffByDefaultNothingChanges)
{
	cpu().msrs[kDeadline] = 5000;
	virtualize();
	EXPECT_FALSE(hv.ctls.proc & CPU_BASED_USE_TSC_OFFSETTING);
	vt_tsc_hide_add(&hv, 1000);
	vt_tsc_hide_apply(&vcpu);
	EXPECT_EQ(hv.tsc.hidden, 0u);
	EXPECT_EQ(cpu().vmcs.count(TSC_OFFSET), 0u) << "no offset written";
	EXPECT_EQ(cpu().msrs[kDeadline], 5000u);
	EXPECT_FALSE(msr_exits(kTsc));
	EXPECT_FALSE(msr_exits(kDeadline));
}

TEST_F(TscHide, RefusedWhereTheCpuCannotOffset)
{
	VmxProfile p = bochs_skylake_x;
	p.proc &= ~((uint64_t)CPU_BASED_USE_TSC_OFFSETTING << 32);	// allowed-1 (SDM 3D A.3.2)
	seed_vmx(p);
	ASSERT_EQ(init(), 0);
	EXPECT_EQ(vt_hv_enable_tsc_hiding(&hv), -VT_EOPNOTSUPP);
	EXPECT_FALSE(hv.ctls.proc & CPU_BASED_USE_TSC_OFFSETTING);
	EXPECT_FALSE(hv.tsc.on);
}

TEST_F(TscHide, BeforeAnyStopTheOffsetIsZeroAndNothingExits)
{
	start();
	EXPECT_TRUE(cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_USE_TSC_OFFSETTING);
	EXPECT_EQ(cpu().vmcs[TSC_OFFSET], 0u);
	EXPECT_FALSE(msr_exits(kTsc));
	EXPECT_FALSE(msr_exits(kDeadline));
}

TEST_F(TscHide, AStopTakesItsTimeOutOfTheGuestsTsc)
{
	start();
	stop_hides(1000);
	stop_hides(234);
	EXPECT_EQ(cpu().vmcs[TSC_OFFSET], (uint64_t)-1234ll) << "guest TSC = real TSC - 1234";
	EXPECT_TRUE(msr_exits(kTsc));
	EXPECT_TRUE(msr_exits(kDeadline));
}

TEST_F(TscHide, AnArmedDeadlineFollowsSoItFiresAtTheGuestsTime)
{
	cpu().msrs[kDeadline] = 50000;	// armed by the kernel before the stop
	start();
	stop_hides(1000);
	EXPECT_EQ(cpu().msrs[kDeadline], 51000u) << "fires when the guest's TSC reads 50000";
	stop_hides(0);
	EXPECT_EQ(cpu().msrs[kDeadline], 51000u) << "moved once per increase only";
	// The guest arms a new one in its own time and reads it back so.
	msr_access(EXIT_REASON_MSR_WRITE, kDeadline, 70000);
	EXPECT_FALSE(faulted());
	EXPECT_EQ(cpu().msrs[kDeadline], 71000u);
	EXPECT_EQ(guest_rdmsr(kDeadline), 70000u);
	// 0 disarms; a fired timer reads 0 (SDM 3A 11.5.4.1): both stay 0.
	msr_access(EXIT_REASON_MSR_WRITE, kDeadline, 0);
	EXPECT_EQ(cpu().msrs[kDeadline], 0u);
	EXPECT_EQ(guest_rdmsr(kDeadline), 0u);
	stop_hides(500);
	EXPECT_EQ(cpu().msrs[kDeadline], 0u) << "a disarmed timer is not armed by a stop";
}

TEST_F(TscHide, ADeadlineNearTheEndOfTimeDoesNotWrapIntoThePast)
{
	cpu().msrs[kDeadline] = 0;
	start();
	stop_hides(1000);
	msr_access(EXIT_REASON_MSR_WRITE, kDeadline, ~0ull - 10);
	EXPECT_EQ(cpu().msrs[kDeadline], ~0ull);
}

TEST_F(TscHide, WritingTheTscSetsWhatTheGuestThenReads)
{
	start();
	stop_hides(1000);
	cpu().msrs[kTsc] = 0;
	msr_access(EXIT_REASON_MSR_WRITE, kTsc, 123456789);
	EXPECT_FALSE(faulted());
	EXPECT_EQ(cpu().msrs[kTsc], 123457789u) << "the real counter, so that real - 1000 = the value written";
}

TEST_F(TscHide, ReadingTheTscThroughTheExitIsOffsetLikeRdtsc)
{
	start();
	stop_hides(1000000);
	uint64_t before = vt_rdtsc();	// the fake counter, +100 a read
	uint64_t read = guest_rdmsr(kTsc);
	uint64_t after = vt_rdtsc();
	EXPECT_GT(read, before - 1000000);
	EXPECT_LT(read, after - 1000000);
}

// Root's records are stamped on the guest's clock: the console maps a
// stamp to time by the TSC it reads itself, in the guest.
TEST_F(TscHide, RecordsAreStampedWithTheTscTheGuestReads)
{
	start();
	stop_hides(1000000);
	uint64_t before = vt_rdtsc();
	vt_guest_regs r = keyed_vmcall(VTICE_VMCALL_EMIT_TEST, 1, 0xabc);
	uint64_t after = vt_rdtsc();
	ASSERT_EQ(r.rax, (uint64_t)VTICE_VMCALL_OK);
	ASSERT_EQ(vcpu.ring.hdr->head, 1u);
	EXPECT_GT(vcpu.ring.records[0].tsc, before - 1000000);
	EXPECT_LT(vcpu.ring.records[0].tsc, after - 1000000) << "the real counter's reading, 1,000,000 ahead";
}

TEST_F(TscHide, UnloadGivesTheDeadlineBackToTheRealCounter)
{
	cpu().msrs[kDeadline] = 50000;
	start();
	stop_hides(1000);
	ASSERT_EQ(cpu().msrs[kDeadline], 51000u);
	// The unload's VMCALL: root moves the deadline as the CPU leaves VMX
	// (the kernel's copy of the vCPU would not know the amount).
	vt_guest_regs r{};
	r.rax = VTICE_VMCALL_DEVIRTUALIZE;
	r.rcx = hv.key;
	EXPECT_FALSE(vm_exit(EXIT_REASON_VMCALL, 0, r)) << "leaves VMX";
	EXPECT_EQ(cpu().msrs[kDeadline], 50000u) << "bare again, the kernel's TSC is the real one";
	EXPECT_EQ(vcpu.tsc_applied, 0u);
}

TEST_F(TscHide, ACpuVirtualizedAfterAStopTakesTheMachinesOffset)
{
	start();
	stop_hides(1000);
	// As a CPU brought online later: bare, with a deadline in real time.
	vt_tsc_hide_release(&vcpu);
	cpu().msrs[kDeadline] = 90000;
	vt_tsc_hide_apply(&vcpu);
	EXPECT_EQ(cpu().vmcs[TSC_OFFSET], (uint64_t)-1000ll) << "the same offset as every other CPU";
	EXPECT_EQ(cpu().msrs[kDeadline], 91000u);
}

TEST_F(TscHide, ACpuWithoutTheDeadlineMsrStillFaults)
{
	cpu().msrs.erase(kDeadline);
	start();
	stop_hides(1000);
	msr_access(EXIT_REASON_MSR_READ, kDeadline);
	EXPECT_TRUE(faulted()) << "#GP as on the bare CPU";
	msr_access(EXIT_REASON_MSR_WRITE, kDeadline, 5);
	EXPECT_TRUE(faulted());
}

}  // namespace
