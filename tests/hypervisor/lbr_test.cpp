// LBR snapshots at a crash (hypervisor/debug/lbr.c) and the guest's own
// DEBUGCTL and LBR stack while the hypervisor keeps LBR on (core/exit_msr.c,
// core/lbr_view.c). Expected values come from the SDM (Vol. 3B 18.4.8 and
// the per-model sections: stack depth, MSR addresses, LBR_FMT layouts) and
// from the seeds below.
#include <atomic>
#include <thread>

#include "hv_fixture.hpp"
#include "lbr_seed.hpp"

extern "C" {
#include "lbr.h"
#include "stop.h"
#include "stub.h"
#include <vtice/vmcall.h>
}

using namespace vtice::fake;

namespace {

TEST(LbrDetect, SkylakeHas32EntriesAt0x680WithInfoMsrs)
{
	reset();
	seed_cpu(kSkylakeX, LBR_FORMAT_INFO);
	vt_lbr_model m;
	vt_lbr_detect(&m, VTICE_CAP_DEBUGCTL_LBR);
	EXPECT_EQ(m.status, (uint32_t)VTICE_LBR_OK);
	EXPECT_EQ(m.model, 0x655u);
	EXPECT_EQ(m.nr, 32u);
	EXPECT_EQ(m.from, 0x680u);
	EXPECT_EQ(m.to, 0x6c0u);
	EXPECT_EQ(m.info, 0xdc0u);
	EXPECT_TRUE(m.has_select);
	EXPECT_EQ(m.format, 5u);
}

TEST(LbrDetect, HaswellHas16AtTheSameAddressesWithoutInfo)
{
	reset();
	seed_cpu(kHaswell, LBR_FORMAT_EIP_FLAGS2);
	vt_lbr_model m;
	vt_lbr_detect(&m, VTICE_CAP_DEBUGCTL_LBR);
	EXPECT_EQ(m.status, (uint32_t)VTICE_LBR_OK);
	EXPECT_EQ(m.nr, 16u);
	EXPECT_EQ(m.from, 0x680u);
	EXPECT_EQ(m.info, 0u) << "format 4 keeps its flags in FROM_IP";
}

TEST(LbrDetect, BonnellAtomHas8AtTheCore2Addresses)
{
	reset();
	seed_cpu(kBonnell, LBR_FORMAT_EIP_FLAGS);
	vt_lbr_model m;
	vt_lbr_detect(&m, VTICE_CAP_DEBUGCTL_LBR);
	EXPECT_EQ(m.status, (uint32_t)VTICE_LBR_OK);
	EXPECT_EQ(m.nr, 8u);
	EXPECT_EQ(m.from, 0x40u);
	EXPECT_EQ(m.to, 0x60u);
	EXPECT_FALSE(m.has_select);
}

TEST(LbrDetect, WhyNot)
{
	vt_lbr_model m;
	reset();
	seed_cpu(kSkylakeX, LBR_FORMAT_INFO);
	vt_lbr_detect(&m, 0);	// Bochs: DEBUGCTL.LBR reads back 0
	EXPECT_EQ(m.status, (uint32_t)VTICE_LBR_NO_DEBUGCTL);
	EXPECT_EQ(m.nr, 0u);

	reset();
	seed_cpu(kSkylakeX, LBR_FORMAT_INFO, false);
	vt_lbr_detect(&m, VTICE_CAP_DEBUGCTL_LBR);
	EXPECT_EQ(m.status, (uint32_t)VTICE_LBR_NOT_INTEL);

	reset();
	seed_cpu(0x000f0ff0, LBR_FORMAT_INFO);	// family 6, model 0xff
	vt_lbr_detect(&m, VTICE_CAP_DEBUGCTL_LBR);
	EXPECT_EQ(m.status, (uint32_t)VTICE_LBR_UNKNOWN_MODEL);

	reset();
	seed_cpu(kSkylakeX, 0x3f);
	cpu().cpuid[{0, 0}].eax = 0x20;	// leaf 0x1C exists
	cpu().cpuid[{7, 0}] = {0, 0, 0, 1u << 19};	// CPUID.(7,0):EDX[19] arch LBR
	cpu().cpuid[{0x1c, 0}] = {0x7, 0, 0, 0};	// depths 8, 16, 24
	vt_lbr_detect(&m, VTICE_CAP_DEBUGCTL_LBR);
	EXPECT_EQ(m.status, (uint32_t)VTICE_LBR_ARCH_ONLY);
	EXPECT_EQ(m.arch_depth, 24u);
}

TEST(LbrDecode, FlagBitsPerFormat)
{
	vtice_lbr_entry e;
	const uint64_t addr = 0xffffffff81000010ull, to = 0xffffffff81000020ull;

	// Format 3: FROM[63] mispredicted, bits 62:0 the address.
	vt_lbr_decode(LBR_FORMAT_EIP_FLAGS, (1ull << 63) | (addr & ~(1ull << 63)), to, 0, &e);
	EXPECT_EQ(e.from, addr);
	EXPECT_EQ(e.flags, VTICE_LBR_MISPRED);
	vt_lbr_decode(LBR_FORMAT_EIP_FLAGS, addr & ~(1ull << 63), to, 0, &e);
	EXPECT_EQ(e.from, addr) << "bit 62 extends into 63";
	EXPECT_EQ(e.flags, 0u);

	// Format 4: [63] mispredicted, [62] in TSX, [61] abort, address 60:0.
	uint64_t low61 = addr & ((1ull << 61) - 1);
	vt_lbr_decode(LBR_FORMAT_EIP_FLAGS2, (1ull << 63) | (1ull << 61) | low61, to, 0, &e);
	EXPECT_EQ(e.from, addr);
	EXPECT_EQ(e.flags, VTICE_LBR_MISPRED | VTICE_LBR_TSX_ABORT);
	EXPECT_EQ(e.to, to);

	// Format 5: plain addresses, flags and cycles from MSR_LBR_INFO_x.
	vt_lbr_decode(LBR_FORMAT_INFO, addr, to, (1ull << 62) | 0x1234, &e);
	EXPECT_EQ(e.from, addr);
	EXPECT_EQ(e.flags, VTICE_LBR_IN_TSX | VTICE_LBR_CYCLES);
	EXPECT_EQ(e.cycles, 0x1234u);

	// Format 6 (Goldmont): FROM[63] mispredicted, TO[63:48] cycles.
	vt_lbr_decode(LBR_FORMAT_TIME, addr & ~(1ull << 63), (0x42ull << 48) | (to & 0xffffffffffffull),
		      0, &e);
	EXPECT_EQ(e.from, addr);
	EXPECT_EQ(e.to, to);
	EXPECT_EQ(e.cycles, 0x42u);
	EXPECT_EQ(e.flags, VTICE_LBR_CYCLES);

	// Format 2: nothing is a flag.
	vt_lbr_decode(LBR_FORMAT_EIP, addr, to, ~0ull, &e);
	EXPECT_EQ(e.from, addr);
	EXPECT_EQ(e.flags, 0u);
}

class Lbr : public HvFixture {
protected:
	bool lbr_up = false;

	void SetUp() override
	{
		HvFixture::SetUp();
		seed_cpu(kSkylakeX, LBR_FORMAT_INFO);
		cpu().msr_sticky_mask[MSR_IA32_DEBUGCTLMSR] = DEBUGCTLMSR_LBR | DEBUGCTLMSR_BTF;
		virtualize();
		guest_kernel_mode();
		hv.caps.flags |= VTICE_CAP_DEBUGCTL_LBR | VTICE_CAP_DEBUGCTL_BTF;
	}

	void TearDown() override
	{
		if (lbr_up)
			vt_lbr_fini();
		HvFixture::TearDown();
	}

	void start(uint32_t nr_cpus = 1)
	{
		ASSERT_EQ(vt_lbr_init(&hv, nr_cpus), 0);
		lbr_up = true;
	}

	uint64_t guest_rdmsr(uint32_t msr)
	{
		vt_guest_regs r{};
		r.rcx = msr;
		EXPECT_TRUE(vm_exit(EXIT_REASON_MSR_READ, 0, r));
		return r.rdx << 32 | (uint32_t)r.rax;
	}

	void guest_wrmsr(uint32_t msr, uint64_t v)
	{
		vt_guest_regs r{};
		r.rcx = msr;
		r.rax = (uint32_t)v;
		r.rdx = v >> 32;
		EXPECT_TRUE(vm_exit(EXIT_REASON_MSR_WRITE, 0, r));
		EXPECT_EQ(entry_event(), 0u) << "no #GP";
	}

	uint64_t vmcall_lbr(uint32_t cpu_nr, uint32_t item, uint64_t *status)
	{
		vt_guest_regs r{};
		r.rdx = (uint64_t)cpu_nr << 32 | item;
		vt_exit exit{&vcpu, &r, EXIT_REASON_VMCALL, EXIT_REASON_VMCALL};
		EXPECT_TRUE(vt_lbr_vmcall(&vcpu, &exit));
		*status = r.rax;
		return r.rdx;
	}
};

TEST_F(Lbr, SnapshotIsOldestFirstFromTos)
{
	start();
	seed_stack(0x680, 0x6c0, 32, 5);	// entry 5 is the most recent
	cpu().vmcs[GUEST_RIP] = kFrom + 0x777;
	vt_lbr_crash_begin(&vcpu, VTICE_LBR_EV_OOPS);
	vt_lbr_crash_end();
	const vt_lbr_snap *s = vt_lbr_snapshot(0);
	ASSERT_NE(s, nullptr);
	EXPECT_EQ(s->event, (uint32_t)VTICE_LBR_EV_OOPS);
	EXPECT_EQ(s->rip, kFrom + 0x777);
	ASSERT_EQ(s->count, 32u);
	for (uint32_t n = 0; n < 32; n++) {
		uint32_t i = (6 + n) % 32;	// 6, 7, ..., 31, 0, ..., 5
		EXPECT_EQ(s->br[n].from, kFrom + 16 * i) << n;
		EXPECT_EQ(s->br[n].to, kTo + 16 * i) << n;
		EXPECT_EQ(s->br[n].cycles, i) << n;
	}
	EXPECT_EQ(s->snapshots, 1u);
	EXPECT_EQ(s->seq % 2, 0u) << "not left mid-write";
	EXPECT_EQ(s->flags, (uint32_t)VTICE_LBR_SELECT_VALID);
}

TEST_F(Lbr, EntriesNeverWrittenAreLeftOut)
{
	start();
	seed_stack(0x680, 0x6c0, 32, 2);
	for (uint32_t i = 3; i < 32; i++)
		cpu().msrs[0x680 + i] = cpu().msrs[0x6c0 + i] = 0;	// only 0, 1, 2 recorded
	vt_lbr_crash_begin(&vcpu, VTICE_LBR_EV_PANIC);
	vt_lbr_crash_end();
	const vt_lbr_snap *s = vt_lbr_snapshot(0);
	ASSERT_EQ(s->count, 3u);
	EXPECT_EQ(s->br[0].from, kFrom);
	EXPECT_EQ(s->br[2].from, kFrom + 32);
}

TEST_F(Lbr, Format4FlagsAreMaskedInTheSnapshot)
{
	vt_lbr_fini();
	cpu().cpuid[{1, 0}] = {kHaswell, 0x00010800, kLeaf1Ecx, 0xbfebfbff};
	cpu().msrs[MSR_IA32_PERF_CAPABILITIES] = LBR_FORMAT_EIP_FLAGS2;
	start();
	seed_stack(0x680, 0x6c0, 16, 15);
	// Format 4 keeps flags in FROM[63:61]: the address is bits 60:0.
	for (uint32_t i = 0; i < 16; i++)
		cpu().msrs[0x680 + i] &= (1ull << 61) - 1;
	// Entry 0 (the oldest): mispredicted, inside a TSX region.
	cpu().msrs[0x680] = (1ull << 63) | (1ull << 62) | (kFrom & ((1ull << 61) - 1));
	vt_lbr_crash_begin(&vcpu, VTICE_LBR_EV_TRIPLE_FAULT);
	vt_lbr_crash_end();
	const vt_lbr_snap *s = vt_lbr_snapshot(0);
	ASSERT_EQ(s->count, 16u);
	EXPECT_EQ(s->br[0].from, kFrom);
	EXPECT_EQ(s->br[0].flags, VTICE_LBR_MISPRED | VTICE_LBR_IN_TSX);
	EXPECT_EQ(s->br[1].from, kFrom + 16);
	EXPECT_EQ(s->br[1].flags, 0u);
}

TEST_F(Lbr, HypervisorsLbrIsSetButTheGuestReadsItsOwnDebugctl)
{
	start();
	vt_lbr_pre_entry(&vcpu);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_DEBUGCTL] & DEBUGCTLMSR_LBR, DEBUGCTLMSR_LBR)
		<< "VM entry loads LBR on";
	EXPECT_EQ(guest_rdmsr(MSR_IA32_DEBUGCTLMSR), 0u) << "the guest never wrote LBR";
	guest_wrmsr(MSR_IA32_DEBUGCTLMSR, DEBUGCTLMSR_BTF);
	EXPECT_EQ(guest_rdmsr(MSR_IA32_DEBUGCTLMSR), DEBUGCTLMSR_BTF);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_DEBUGCTL], DEBUGCTLMSR_BTF | DEBUGCTLMSR_LBR);
	EXPECT_EQ(cpu().msrs[MSR_IA32_DEBUGCTLMSR], 0u) << "VMX root's DEBUGCTL stays 0";
}

TEST_F(Lbr, GuestThatTurnsLbrOnGetsItAndKeepsWorking)
{
	start();
	vt_lbr_pre_entry(&vcpu);
	// perf enables LBR with freeze-on-PMI (DEBUGCTL bit 11).
	const uint64_t freeze = 1ull << 11;
	cpu().msr_sticky_mask[MSR_IA32_DEBUGCTLMSR] |= freeze;
	guest_wrmsr(MSR_IA32_DEBUGCTLMSR, DEBUGCTLMSR_LBR | freeze);
	EXPECT_EQ(vcpu.debugctl_owned & DEBUGCTLMSR_LBR, 0u) << "stepped aside";
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_DEBUGCTL], DEBUGCTLMSR_LBR | freeze);
	EXPECT_EQ(guest_rdmsr(MSR_IA32_DEBUGCTLMSR), DEBUGCTLMSR_LBR | freeze);
	// A PMI froze the stack: the CPU cleared LBR, "save debug controls" saved it.
	cpu().vmcs[GUEST_IA32_DEBUGCTL] = freeze;
	EXPECT_EQ(guest_rdmsr(MSR_IA32_DEBUGCTLMSR), freeze) << "as on the bare CPU";
	vt_lbr_pre_entry(&vcpu);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_DEBUGCTL], freeze) << "the freeze is the guest's";
	// perf turns LBR off: the hypervisor takes the bit back, hidden again.
	guest_wrmsr(MSR_IA32_DEBUGCTLMSR, 0);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_DEBUGCTL], DEBUGCTLMSR_LBR);
	EXPECT_EQ(guest_rdmsr(MSR_IA32_DEBUGCTLMSR), 0u);
}

TEST_F(Lbr, SnapshotSaysWhenTheKernelOwnedLbr)
{
	start();
	vt_lbr_pre_entry(&vcpu);
	guest_wrmsr(MSR_IA32_DEBUGCTLMSR, DEBUGCTLMSR_LBR);
	seed_stack(0x680, 0x6c0, 32, 0);
	cpu().msrs[MSR_LBR_SELECT] = 0x1;	// perf filtered out ring 0
	vt_lbr_crash_begin(&vcpu, VTICE_LBR_EV_OOPS);
	vt_lbr_crash_end();
	const vt_lbr_snap *s = vt_lbr_snapshot(0);
	EXPECT_EQ(s->flags, (uint32_t)(VTICE_LBR_GUEST_OWNED | VTICE_LBR_SELECT_VALID));
	EXPECT_EQ(s->lbr_select, 0x1u);
}

// While the hypervisor keeps LBR on, the kernel (its own DEBUGCTL.LBR
// clear) must find the stack standing where it was, as on the bare CPU.
bool msr_read_exits(const vt_vcpu &v, uint32_t msr)
{
	return v.msr_bitmap[MSR_BITMAP_READ_LOW + msr / 8] & (1u << (msr % 8));
}

TEST_F(Lbr, TheKernelReadsTheStackWhereItStoodWhileTheHypervisorRecords)
{
	start();
	seed_stack(0x680, 0x6c0, 32, 5);
	EXPECT_FALSE(msr_read_exits(vcpu, 0x680)) << "nothing owned yet: native reads";
	vt_lbr_pre_entry(&vcpu);
	EXPECT_TRUE(msr_read_exits(vcpu, MSR_LBR_TOS));
	EXPECT_TRUE(msr_read_exits(vcpu, 0x680 + 31));
	EXPECT_TRUE(msr_read_exits(vcpu, 0x6c0));
	EXPECT_TRUE(msr_read_exits(vcpu, MSR_LBR_INFO_0 + 31));
	EXPECT_FALSE(msr_read_exits(vcpu, MSR_LBR_SELECT)) << "the filter is the kernel's";
	record_branch(kFrom + 0x999, kTo + 0x999, 7);	// the CPU records on: TOS 6
	EXPECT_EQ(guest_rdmsr(MSR_LBR_TOS), 5u);
	EXPECT_EQ(guest_rdmsr(0x680 + 6), kFrom + 16 * 6);
	EXPECT_EQ(guest_rdmsr(0x6c0 + 6), kTo + 16 * 6);
	EXPECT_EQ(guest_rdmsr(MSR_LBR_INFO_0 + 6), 6u);
	// The crash snapshot is the hardware's, with the branch the kernel did not see.
	vt_lbr_crash_begin(&vcpu, VTICE_LBR_EV_OOPS);
	vt_lbr_crash_end();
	const vt_lbr_snap *s = vt_lbr_snapshot(0);
	ASSERT_EQ(s->count, 32u);
	EXPECT_EQ(s->br[31].from, kFrom + 0x999);
}

TEST_F(Lbr, TheKernelsWritesGoToItsCopyAndIntoTheStackWhenItTakesLbr)
{
	start();
	seed_stack(0x680, 0x6c0, 32, 5);
	vt_lbr_pre_entry(&vcpu);
	guest_wrmsr(0x680 + 3, 0);	// perf's reset of the stack
	EXPECT_EQ(guest_rdmsr(0x680 + 3), 0u);
	EXPECT_EQ(cpu().msrs[0x680 + 3], kFrom + 48) << "the recording is untouched";
	record_branch(kFrom + 0x999, kTo + 0x999);
	// perf turns LBR on: the kernel gets the stack as it left it, natively.
	guest_wrmsr(MSR_IA32_DEBUGCTLMSR, DEBUGCTLMSR_LBR);
	EXPECT_FALSE(msr_read_exits(vcpu, 0x680));
	EXPECT_FALSE(msr_read_exits(vcpu, MSR_LBR_TOS));
	EXPECT_EQ(cpu().msrs[MSR_LBR_TOS], 5u);
	EXPECT_EQ(cpu().msrs[0x680 + 3], 0u);
	EXPECT_EQ(cpu().msrs[0x680 + 6], kFrom + 16 * 6) << "the branch it did not record is gone";
	EXPECT_EQ(cpu().msrs[MSR_LBR_INFO_0 + 6], 6u);
	// perf turns it off: the hypervisor takes it back, and the copy again.
	guest_wrmsr(MSR_IA32_DEBUGCTLMSR, 0);
	EXPECT_TRUE(msr_read_exits(vcpu, 0x680));
	record_branch(kFrom + 0x555, kTo + 0x555);
	EXPECT_EQ(guest_rdmsr(0x680 + 6), kFrom + 16 * 6);
}

TEST_F(Lbr, AWriteTheStackRefusesIsAGpAndWhatSticksIsWhatReadsBack)
{
	start();
	seed_stack(0x680, 0x6c0, 32, 5);
	cpu().msr_read_only.insert(MSR_LBR_TOS);
	cpu().msr_sticky_mask[0x6c0 + 2] = ~0xfull;	// low bits that do not stick
	vt_lbr_pre_entry(&vcpu);
	vt_guest_regs r{};
	r.rcx = MSR_LBR_TOS;
	r.rax = 9;
	EXPECT_TRUE(vm_exit(EXIT_REASON_MSR_WRITE, 0, r));
	EXPECT_EQ(entry_event(), kInjectGP) << "a read-only TOS, as on the bare CPU";
	cpu().vmcs[VM_ENTRY_INTR_INFO_FIELD] = 0;
	EXPECT_EQ(guest_rdmsr(MSR_LBR_TOS), 5u);
	guest_wrmsr(0x6c0 + 2, kTo + 0x12345);
	EXPECT_EQ(guest_rdmsr(0x6c0 + 2), (kTo + 0x12345) & ~0xfull);
	EXPECT_EQ(cpu().msrs[0x6c0 + 2], kTo + 32) << "the trial write was undone";
}

TEST_F(Lbr, WhereTosIsReadOnlyTheCopyGoesBackRotatedInTheSameOrder)
{
	start();
	seed_stack(0x680, 0x6c0, 32, 5);
	cpu().msr_read_only.insert(MSR_LBR_TOS);
	vt_lbr_pre_entry(&vcpu);
	for (int i = 0; i < 3; i++)
		record_branch(kFrom + 0x900 + i, kTo + 0x900 + i);	// TOS 8
	guest_wrmsr(MSR_IA32_DEBUGCTLMSR, DEBUGCTLMSR_LBR);
	ASSERT_EQ(cpu().msrs[MSR_LBR_TOS], 8u);
	for (uint32_t k = 0; k < 32; k++) {
		uint32_t was = (5 - k) & 31;	// k-th most recent in the copy
		EXPECT_EQ(cpu().msrs[0x680 + ((8 - k) & 31)], kFrom + 16 * was) << k;
		EXPECT_EQ(cpu().msrs[MSR_LBR_INFO_0 + ((8 - k) & 31)], was) << k;
	}
}

TEST_F(Lbr, LeavingVmxPutsTheStackBackAsTheKernelLeftIt)
{
	start();
	seed_stack(0x680, 0x6c0, 32, 5);
	vt_lbr_pre_entry(&vcpu);
	record_branch(kFrom + 0x999, kTo + 0x999);
	vt_guest_regs r{};
	vt_vcpu_leave_vmx(&vcpu, &r);
	EXPECT_EQ(cpu().msrs[MSR_LBR_TOS], 5u);
	EXPECT_EQ(cpu().msrs[0x680 + 6], kFrom + 16 * 6);
	EXPECT_FALSE(msr_read_exits(vcpu, 0x680));
}

TEST_F(Lbr, NoStackToHideWithoutLbr)
{
	hv.caps.flags &= ~VTICE_CAP_DEBUGCTL_LBR;	// Bochs
	start();
	vt_lbr_pre_entry(&vcpu);
	EXPECT_EQ(hv.lbr_msrs.nr, 0u);
	EXPECT_FALSE(msr_read_exits(vcpu, MSR_LBR_TOS));
	EXPECT_FALSE(vcpu.lbr_view.active);
}

TEST_F(Lbr, LbrNeverReachesVmxRootsDebugctl)
{
	// The probe said LBR sticks; this CPU would drop it from a WRMSR, so
	// reading it back proves the trial write left LBR out.
	cpu().msr_sticky_mask[MSR_IA32_DEBUGCTLMSR] = DEBUGCTLMSR_BTF;
	guest_wrmsr(MSR_IA32_DEBUGCTLMSR, DEBUGCTLMSR_LBR | DEBUGCTLMSR_BTF);
	EXPECT_EQ(guest_rdmsr(MSR_IA32_DEBUGCTLMSR), DEBUGCTLMSR_LBR | DEBUGCTLMSR_BTF);
	EXPECT_EQ(cpu().msrs[MSR_IA32_DEBUGCTLMSR], 0u);
}

TEST_F(Lbr, CpuWithoutLbrReportsUnsupportedAndChangesNothing)
{
	hv.caps.flags &= ~VTICE_CAP_DEBUGCTL_LBR;	// Bochs
	start();
	EXPECT_EQ(vt_lbr_get_model()->status, (uint32_t)VTICE_LBR_NO_DEBUGCTL);
	const uint64_t before = cpu().vmcs[GUEST_IA32_DEBUGCTL];
	vt_lbr_pre_entry(&vcpu);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_DEBUGCTL], before);
	vt_lbr_crash_begin(&vcpu, VTICE_LBR_EV_PANIC);
	vt_lbr_crash_end();
	EXPECT_EQ(vt_lbr_snapshot(0), nullptr);
	uint64_t status;
	vmcall_lbr(0, VTICE_VMCALL_LBR_HEADER, &status);
	EXPECT_EQ(status, (uint64_t)VTICE_VMCALL_ENOSYS);
}

TEST_F(Lbr, VmcallReadsEveryWordAndRefusesBadArguments)
{
	start(2);
	seed_stack(0x680, 0x6c0, 32, 31);	// entry 0 is the oldest
	cpu().vmcs[GUEST_RIP] = kFrom + 5;
	vt_lbr_crash_begin(&vcpu, VTICE_LBR_EV_LOCKUP);
	vt_lbr_crash_end();
	uint64_t st;
	uint64_t hdr = vmcall_lbr(0, VTICE_VMCALL_LBR_HEADER, &st);
	EXPECT_EQ(st, (uint64_t)VTICE_VMCALL_OK);
	EXPECT_EQ(hdr & 0xff, (uint64_t)VTICE_LBR_EV_LOCKUP);
	EXPECT_EQ((hdr >> 8) & 0xff, 32u);
	EXPECT_EQ(hdr >> 32, 1u) << "one snapshot";
	EXPECT_EQ(vmcall_lbr(0, VTICE_VMCALL_LBR_RIP, &st), kFrom + 5);
	EXPECT_EQ(vmcall_lbr(0, VTICE_VMCALL_LBR_ENTRY + 0, &st), kFrom);
	EXPECT_EQ(vmcall_lbr(0, VTICE_VMCALL_LBR_ENTRY + 3 * 31 + 1, &st), kTo + 16 * 31);
	EXPECT_EQ(vmcall_lbr(0, VTICE_VMCALL_LBR_ENTRY + 3 * 2 + 2, &st),
		  VTICE_LBR_CYCLES | 2ull << 32);
	EXPECT_EQ(vmcall_lbr(1, VTICE_VMCALL_LBR_HEADER, &st), 0u) << "CPU 1: no snapshot yet";
	EXPECT_EQ(st, (uint64_t)VTICE_VMCALL_OK);
	vmcall_lbr(2, VTICE_VMCALL_LBR_HEADER, &st);
	EXPECT_EQ(st, (uint64_t)VTICE_VMCALL_EINVAL) << "no CPU 2";
	vmcall_lbr(0, VTICE_VMCALL_LBR_ENTRY + 3 * VTICE_LBR_MAX, &st);
	EXPECT_EQ(st, (uint64_t)VTICE_VMCALL_EINVAL);
	vmcall_lbr(0, 5, &st);
	EXPECT_EQ(st, (uint64_t)VTICE_VMCALL_EINVAL);
	vmcall_lbr(0xffffffffu, VTICE_VMCALL_LBR_SEQ, &st);
	EXPECT_EQ(st, (uint64_t)VTICE_VMCALL_EINVAL);
}

std::string monitor(const char *cmd)
{
	char out[4096];
	EXPECT_EQ(vt_stub_monitor(nullptr, cmd, out, sizeof(out)), 0);
	return out;
}

TEST_F(Lbr, MonitorListsOneCpusBranchesOldestFirst)
{
	start();
	seed_stack(0x680, 0x6c0, 32, 31);
	for (uint32_t i = 2; i < 32; i++)
		cpu().msrs[0x680 + i] = cpu().msrs[0x6c0 + i] = 0;
	cpu().msrs[MSR_LBR_INFO_0 + 1] = LBR_INFO_MISPRED;
	cpu().vmcs[GUEST_RIP] = 0xffffffff81000abcull;
	vt_lbr_crash_begin(&vcpu, VTICE_LBR_EV_PANIC);
	vt_lbr_crash_end();
	EXPECT_EQ(monitor("lbr 0"), "cpu 0: panic at 0xffffffff81000abc, 2 branches\n"
				    "  0xffffffff81000000 -> 0xffffffff82000000\n"
				    "  0xffffffff81000010 -> 0xffffffff82000010 M\n");
	EXPECT_EQ(monitor("lbr"), "lbr: 32 entries, format 5; \"monitor lbr CPU\" lists one CPU's branches\n"
				  "cpu 0: panic at 0xffffffff81000abc, 2 branches\n");
	EXPECT_EQ(monitor("lbr 7"), "lbr: no such CPU\n");
	EXPECT_EQ(monitor("lbr x"), "usage: monitor lbr [CPU]\n");
}

TEST_F(Lbr, MonitorSaysPlainlyWhenTheCpuHasNoLbr)
{
	hv.caps.flags &= ~VTICE_CAP_DEBUGCTL_LBR;
	start();
	EXPECT_EQ(monitor("lbr"),
		  "lbr: this CPU has no LBR (DEBUGCTL.LBR does not stick: an emulated CPU such as Bochs)\n");
}

// The crashing CPU 0 saves at its exit; CPU 1, parked by the all-stop,
// saves its own stack (its own fake CPU on its own thread).
TEST_F(Lbr, EveryParkedCpuSavesItsOwnStack)
{
	start(2);
	seed_stack(0x680, 0x6c0, 32, 0);
	static vt_vcpu v1;
	v1 = {};
	v1.hv = &hv;
	v1.cpu = 1;
	v1.apic_id = 1;
	v1.launched = true;
	vcpu.launched = true;
	static vt_vcpu *vcpus[2];
	vcpus[0] = &vcpu;
	vcpus[1] = &v1;
	static std::atomic<bool> nmi1;
	nmi1 = false;
	nmi_hook() = [](uint32_t c) { if (c == 1) nmi1 = true; };
	tsc_khz() = 1000000;
	static bool served;
	served = false;
	vt_stop_init(vcpus, 2, [](u32, const vt_dbg_stop *) {
		const vt_lbr_snap *s1 = vt_lbr_snapshot(1);
		served = s1 && s1->event == VTICE_LBR_EV_PARKED;
	});
	vt_stop_on_park(vt_lbr_on_exit);
	std::thread cpu1([&] {
		seed_cpu(kSkylakeX, LBR_FORMAT_INFO);
		seed_stack(0x680, 0x6c0, 32, 0);
		cpu().msrs[0x681] = kFrom + 0x1111;	// CPU 1's oldest differs
		cpu().in_vmx = true;
		cpu().current_vmcs = 0x1001;
		cpu().vmcs[GUEST_RIP] = kFrom + 0x100;
		while (!nmi1)
			std::this_thread::yield();
		vt_guest_regs r{};
		vt_exit exit{&v1, &r, EXIT_REASON_EXCEPTION_NMI, EXIT_REASON_EXCEPTION_NMI};
		EXPECT_TRUE(vt_stop_on_nmi(&v1, &exit));
	});
	vt_guest_regs r0{};
	vt_exit exit0{&vcpu, &r0, EXIT_REASON_EXCEPTION_NMI, EXIT_REASON_EXCEPTION_NMI};
	vt_dbg_stop why{0, VT_STOP_CRASH, kFrom};
	vt_lbr_crash_begin(&vcpu, VTICE_LBR_EV_PANIC);
	vt_stop_machine(&vcpu, &exit0, &why);
	vt_lbr_crash_end();
	cpu1.join();
	nmi_hook() = nullptr;
	EXPECT_TRUE(served) << "CPU 1's snapshot was there while the machine stood";
	const vt_lbr_snap *s0 = vt_lbr_snapshot(0), *s1 = vt_lbr_snapshot(1);
	EXPECT_EQ(s0->event, (uint32_t)VTICE_LBR_EV_PANIC);
	EXPECT_EQ(s1->event, (uint32_t)VTICE_LBR_EV_PARKED);
	EXPECT_EQ(s1->rip, kFrom + 0x100);
	EXPECT_EQ(s1->br[0].from, kFrom + 0x1111) << "oldest is entry 1 with TOS 0";
	EXPECT_EQ(s0->br[0].from, kFrom + 16);
	// Crash over: a later exit of CPU 1 does not overwrite its snapshot.
	vt_lbr_on_exit(&v1);
	EXPECT_EQ(s1->snapshots, 1u);
}

}  // namespace
