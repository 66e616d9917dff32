// Syscall events (hypervisor/core/syscall_*.c) on the fake CPU. The values
// the emulated SYSCALL/SYSRET must produce are the SDM's (Vol. 2B SYSCALL,
// SYSRET "Operation"), with Linux's own STAR/LSTAR/FMASK; the segment
// access rights are the kernel and user values a real VMCS holds (the
// fixture's guest_kernel_mode/guest_user_mode, read from Bochs).
#include "syscall_fixture.hpp"

using namespace vtice::fake;

namespace {

class SyscallTrap : public SyscallFixture {};

TEST_F(SyscallTrap, UnarmedNothingExits)
{
	EXPECT_FALSE(ud_exits());
	EXPECT_FALSE(msr_exits(MSR_EFER));
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_EFER], kEferGuest);
}

TEST_F(SyscallTrap, ArmingClearsSceAndTrapsUdAndEferDisarmingRestores)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_EFER], kEferGuest & ~1ull) << "SCE clear: SYSCALL/SYSRET #UD";
	EXPECT_TRUE(ud_exits());
	EXPECT_TRUE(msr_exits(MSR_EFER));
	ASSERT_EQ(arm(false), (uint64_t)VTICE_VMCALL_OK);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_EFER], kEferGuest);
	EXPECT_FALSE(ud_exits());
	EXPECT_FALSE(msr_exits(MSR_EFER));
}

// Without the "load CET state" controls the guest's SSP and ENDBRANCH
// tracker are not in the VMCS, so the emulation could not move them.
TEST_F(SyscallTrap, RefusesWithCetButNoCetStateControlsOrWithoutTheEferLoadControl)
{
	cpu().vmcs[GUEST_CR4] |= X86_CR4_CET;
	EXPECT_EQ(arm(true), (uint64_t)VTICE_VMCALL_ENOSYS);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_EFER], kEferGuest);
	cpu().vmcs[GUEST_CR4] &= ~(1ull << 23);
	hv.ctls.entry &= ~VM_ENTRY_LOAD_IA32_EFER;
	EXPECT_EQ(arm(true), (uint64_t)VTICE_VMCALL_ENOSYS);
	EXPECT_FALSE(ud_exits());
}

class SyscallTrapCet : public SyscallTrap {
protected:
	static constexpr uint64_t kUserSsp = 0x7ffd2ff8;

	// An IBT kernel whose user task has a shadow stack (Linux 6.6+ on a
	// CET CPU), on a CPU that switches CET state.
	void SetUp() override
	{
		SyscallTrap::SetUp();
		hv.ctls.exit |= VM_EXIT_LOAD_CET_STATE;
		hv.ctls.entry |= VM_ENTRY_LOAD_CET_STATE;
		auto &c = cpu();
		c.vmcs[GUEST_CR4] |= X86_CR4_CET;
		c.vmcs[GUEST_S_CET] = CET_ENDBR_EN | CET_SUPPRESS;
		c.msrs[MSR_IA32_U_CET] = CET_SHSTK_EN;
		c.msrs[MSR_IA32_PL3_SSP] = 0;
		ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	}
};

// SDM Vol. 2B SYSCALL: the user SSP goes to IA32_PL3_SSP; the kernel has
// no shadow stack, so SSP is left alone; its IBT waits for an ENDBR64 at
// the entry point, with SUPPRESS cleared.
TEST_F(SyscallTrapCet, SyscallSavesTheUserSspAndWaitsForEndbr)
{
	vt_guest_regs r = user_syscall();
	cpu().vmcs[GUEST_SSP] = kUserSsp;
	ASSERT_TRUE(ud_exit(r));
	auto &c = cpu();
	EXPECT_EQ(c.vmcs[VM_ENTRY_INTR_INFO_FIELD], 0u);
	EXPECT_EQ(c.msrs[MSR_IA32_PL3_SSP], kUserSsp);
	EXPECT_EQ(c.vmcs[GUEST_SSP], kUserSsp) << "no kernel shadow stack: SSP not loaded";
	EXPECT_EQ(c.vmcs[GUEST_S_CET], (uint64_t)(CET_ENDBR_EN | CET_WAIT_ENDBR));
}

TEST_F(SyscallTrapCet, AKernelShadowStackStartsAtZero)
{
	cpu().vmcs[GUEST_S_CET] = CET_SHSTK_EN;
	vt_guest_regs r = user_syscall();
	cpu().vmcs[GUEST_SSP] = kUserSsp;
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(cpu().vmcs[GUEST_SSP], 0u);
	EXPECT_EQ(cpu().vmcs[GUEST_S_CET], (uint64_t)CET_SHSTK_EN) << "no IBT: tracker untouched";
}

// SDM Vol. 2B SYSRET: back at CPL 3 with a user shadow stack, SSP comes
// from IA32_PL3_SSP.
TEST_F(SyscallTrapCet, SysretRestoresTheUserSsp)
{
	cpu().msrs[MSR_IA32_PL3_SSP] = kUserSsp;
	cpu().vmcs[GUEST_SSP] = 0;
	vt_guest_regs r = kernel_sysret(3);
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(cpu().vmcs[VM_ENTRY_INTR_INFO_FIELD], 0u);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], kUserRip + 2);
	EXPECT_EQ(cpu().vmcs[GUEST_SSP], kUserSsp);
}

TEST_F(SyscallTrapCet, AUserTaskWithoutAShadowStackKeepsPl3Ssp)
{
	cpu().msrs[MSR_IA32_U_CET] = 0;
	cpu().msrs[MSR_IA32_PL3_SSP] = 0x1230;
	vt_guest_regs r = user_syscall();
	cpu().vmcs[GUEST_SSP] = kUserSsp;
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(cpu().msrs[MSR_IA32_PL3_SSP], 0x1230u);
	r = kernel_sysret(3);
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(cpu().vmcs[GUEST_SSP], kUserSsp);
}

TEST_F(SyscallTrap, SyscallIsExecutedAsTheSdmSays)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	vt_guest_regs r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	auto &c = cpu();
	EXPECT_EQ(c.vmcs[VM_ENTRY_INTR_INFO_FIELD], 0u) << "no #UD reaches the guest";
	EXPECT_EQ(r.rcx, kUserRip + 2) << "RCX = the next instruction";
	EXPECT_EQ(r.r11, 0x246u) << "R11 = RFLAGS, RF clear";
	EXPECT_EQ(c.vmcs[GUEST_RIP], kLstar);
	EXPECT_EQ(c.vmcs[GUEST_RFLAGS], (0x246 & ~kFmask) | 2);
	EXPECT_EQ(c.vmcs[GUEST_CS_SELECTOR], 0x10u);
	EXPECT_EQ(c.vmcs[GUEST_SS_SELECTOR], 0x18u);
	EXPECT_EQ(c.vmcs[GUEST_CS_AR_BYTES], 0xa09bu) << "the kernel's own CS rights";
	EXPECT_EQ(c.vmcs[GUEST_SS_AR_BYTES], 0xc093u) << "the kernel's own SS rights";
	EXPECT_EQ(c.vmcs[GUEST_CS_BASE], 0u);
	EXPECT_EQ(c.vmcs[GUEST_CS_LIMIT], 0xffffffffu);
	EXPECT_EQ(c.vmcs[GUEST_PENDING_DBG_EXCEPTIONS] & (1u << 14), 0u);
	EXPECT_EQ(vcpu.counts->syscalls_seen, 1u);
}

TEST_F(SyscallTrap, EntryRecordCarriesNumberArgumentsAndTask)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	vt_guest_regs r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	auto recs = records();
	ASSERT_EQ(recs.size(), 6u);
	EXPECT_EQ(recs[0].type, VTICE_REC_SYSCALL_ENTER);
	EXPECT_EQ(recs[0].flags, 5u) << "five DATA records follow";
	EXPECT_EQ(recs[0].u.syscall.nr, 257u);
	EXPECT_EQ(recs[0].u.syscall.arg, (uint64_t)-100);
	EXPECT_EQ(recs[1].flags, (uint32_t)VTICE_SYSCALL_DATA_ARGS12);
	EXPECT_EQ(recs[1].u.raw[0], 0x7ffd1000u);
	EXPECT_EQ(recs[1].u.raw[1], 0x80000u);
	EXPECT_EQ(recs[2].u.raw[0], 0644u) << "the fourth argument is in R10, not RCX";
	EXPECT_EQ(recs[2].u.raw[1], 0x88u);
	EXPECT_EQ(recs[3].u.raw[0], 0x99u);
	EXPECT_EQ(recs[4].flags, (uint32_t)VTICE_SYSCALL_DATA_TASK);
	EXPECT_EQ(recs[4].u.raw[0], 4242u | (4240ull << 32));
	EXPECT_EQ(recs[4].u.raw[1], kTask);
	EXPECT_EQ(recs[5].flags, (uint32_t)VTICE_SYSCALL_DATA_COMM);
	EXPECT_STREQ(reinterpret_cast<const char *>(recs[5].u.raw), "vtsys");
	for (auto &rec : recs)
		EXPECT_EQ(rec.tsc, recs[0].tsc);
	EXPECT_EQ(vcpu.counts->syscalls_recorded, 1u);
}

// str() of a syscall's argument (vmcall.h, VTICE_VMCALL_SYSCALL_STRINGS):
// the entry of a syscall named in a slot copies the user string its
// argument points to, to the NUL, as STRING records (records.h); other
// syscalls copy nothing, and a kernel address is never read.
class SyscallStrings : public SyscallTrap {
protected:
	static constexpr uint64_t kPath = 0x7ffd1000, kPathPa = 0x400000;	// user_syscall()'s RSI

	uint64_t set_strings(uint64_t slots_lo, uint64_t slots_hi = 0)
	{
		return keyed_vmcall(VTICE_VMCALL_SYSCALL_STRINGS, slots_lo, slots_hi).rax;
	}

	// The records one syscall added, from entering it.
	std::vector<vtice_record> one_entry(vt_guest_regs r)
	{
		size_t before = records().size();
		EXPECT_TRUE(ud_exit(r));
		auto all = records();
		return {all.begin() + static_cast<long>(before), all.end()};
	}

	static std::string string_of(const std::vector<vtice_record> &recs)
	{
		std::string bytes;
		for (const vtice_record &rec : recs)
			if (rec.type == VTICE_REC_SYSCALL_DATA && rec.flags == VTICE_SYSCALL_DATA_STRING)
				bytes.append(reinterpret_cast<const char *>(rec.u.raw), 16);
		return bytes;
	}
};

TEST_F(SyscallStrings, TheNamedSyscallsEntryCopiesItsArgumentsString)
{
	map(cpu().vmcs[GUEST_CR3], 4, kPath, kPathPa);
	const char path[] = "/proc/version";
	put(kPathPa, path, sizeof(path));
	ASSERT_EQ(set_strings(257 | (2u << 12)), (uint64_t)VTICE_VMCALL_OK) << "openat's argument 1 (N = 2)";
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	auto recs = one_entry(user_syscall());
	ASSERT_EQ(recs.size(), 7u) << "the six records of an entry, then one STRING (14 bytes with the NUL)";
	EXPECT_EQ(recs[0].flags, 6u);
	EXPECT_EQ(std::string(string_of(recs).c_str()), path);

	vt_guest_regs other = user_syscall();
	other.rax = 2;	// open: not named
	EXPECT_EQ(one_entry(other).size(), 6u);
	vt_guest_regs kernel_pointer = user_syscall();
	kernel_pointer.rsi = kTask;	// mapped, but the kernel's
	EXPECT_EQ(one_entry(kernel_pointer).size(), 6u) << "a kernel address is never copied";
	vt_guest_regs unmapped = user_syscall();
	unmapped.rsi = 0x7ffd5000;
	EXPECT_EQ(one_entry(unmapped).size(), 6u) << "nothing mapped: no STRING, the event still counts";
}

TEST_F(SyscallStrings, SlotsFillBothRegistersAndRefuseABadArgument)
{
	map(cpu().vmcs[GUEST_CR3], 4, kPath, kPathPa);
	put(kPathPa, "x", 2);
	// Slot 7 (R8's top 16 bits): openat with argument 1; slots 0-6 unused.
	ASSERT_EQ(set_strings(0, (257ull | (2u << 12)) << 48), (uint64_t)VTICE_VMCALL_OK);
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	EXPECT_EQ(string_of(one_entry(user_syscall())).substr(0, 2), std::string("x", 2));
	EXPECT_EQ(set_strings(257 | (7u << 12)), (uint64_t)VTICE_VMCALL_EINVAL) << "arguments 1..6";
	EXPECT_EQ(string_of(one_entry(user_syscall())).substr(0, 1), "x") << "a refused table leaves the old one";
}

// The debug stub's trap (syscall_trap.h, struct vt_sys_stub): set while
// every CPU is parked, each CPU arms or disarms at its own sync; while it
// is on, the kernel side's VMCALLs are refused, and its off never touches
// a trap the kernel side armed.
class SyscallStubTrap : public SyscallStrings {
protected:
	int stub_set(bool on, const char *comm = "", uint64_t strings_lo = 0)
	{
		vt_sys_stub_arm arm{};
		std::strncpy(arm.filter.comm, comm, sizeof(arm.filter.comm) - 1);
		arm.strings[0] = strings_lo;
		return vt_syscall_trap_stub_set(&hv, on ? &arm : nullptr);
	}
};

TEST_F(SyscallStubTrap, EachCpuArmsAtItsSyncWithTheStubsFilterAndStrings)
{
	map(cpu().vmcs[GUEST_CR3], 4, kPath, kPathPa);
	put(kPathPa, "/etc/hosts", 11);
	ASSERT_EQ(stub_set(true, "other", 257 | (2u << 12)), 0);
	EXPECT_FALSE(ud_exits()) << "nothing until the CPU itself syncs";
	vt_syscall_trap_stub_sync(&vcpu);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_EFER], kEferGuest & ~1ull);
	EXPECT_TRUE(ud_exits());
	EXPECT_TRUE(one_entry(user_syscall()).empty()) << "vtsys is not 'other'";
	ASSERT_EQ(stub_set(true, "vtsys", 257 | (2u << 12)), 0);	// a new run, the CPU still armed
	vt_syscall_trap_stub_sync(&vcpu);
	EXPECT_EQ(std::string(string_of(one_entry(user_syscall())).c_str()), "/etc/hosts");
	ASSERT_EQ(stub_set(false), 0);
	vt_syscall_trap_stub_sync(&vcpu);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_EFER], kEferGuest);
	EXPECT_FALSE(ud_exits());
	EXPECT_FALSE(msr_exits(MSR_EFER));
}

TEST_F(SyscallStubTrap, TheKernelSideIsRefusedWhileTheStubsTrapIsOn)
{
	ASSERT_EQ(stub_set(true), 0);
	vt_syscall_trap_stub_sync(&vcpu);
	EXPECT_EQ(arm(false), (uint64_t)VTICE_VMCALL_EBUSY);
	EXPECT_EQ(arm(true, 0, "bash"), (uint64_t)VTICE_VMCALL_EBUSY);
	EXPECT_EQ(set_strings(2 | (1u << 12)), (uint64_t)VTICE_VMCALL_EBUSY);
	EXPECT_EQ(keyed_vmcall(VTICE_VMCALL_SYSCALL_NUMBERS, 0, 1).rax, (uint64_t)VTICE_VMCALL_EBUSY);
	EXPECT_FALSE(hv.sys_numbers.chosen) << "the stub's set (every syscall) stays";
	EXPECT_TRUE(ud_exits()) << "still the stub's";
	ASSERT_EQ(stub_set(false), 0);
	vt_syscall_trap_stub_sync(&vcpu);
	EXPECT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK) << "free again";
}

// The stub's set of syscalls goes with its arming, whole.
TEST_F(SyscallStubTrap, TheStubsSetOfSyscallsRecordsOnlyThem)
{
	vt_sys_stub_arm want{};
	want.numbers.chosen = true;
	want.numbers.bits[4] = 2;	// openat
	ASSERT_EQ(vt_syscall_trap_stub_set(&hv, &want), 0);
	vt_syscall_trap_stub_sync(&vcpu);
	vt_guest_regs r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(records().size(), 6u) << "openat";
	r = user_syscall();
	r.rax = 0;	// read
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(records().size(), 6u) << "not read";
	ASSERT_EQ(stub_set(true), 0);	// a run without a set
	EXPECT_FALSE(hv.sys_numbers.chosen);
}

// Two runs back to back with the machine stopped between them: the first's
// off has not reached the CPU (it applies it as it leaves the stop), and
// the trap it still has is the stub's, which the second run may arm again;
// only the kernel side's trap keeps the stub out.
TEST_F(SyscallStubTrap, AnOffNotYetAppliedLeavesTheTrapTheStubs)
{
	ASSERT_EQ(stub_set(true), 0);
	vt_syscall_trap_stub_sync(&vcpu);
	ASSERT_EQ(stub_set(false), 0);
	EXPECT_TRUE(vcpu.sys.armed) << "still parked";
	EXPECT_FALSE(vt_syscall_trap_kernel_armed(&vcpu));
	ASSERT_EQ(stub_set(true, "vtsys"), 0);
	vt_syscall_trap_stub_sync(&vcpu);
	EXPECT_TRUE(ud_exits());
	ASSERT_EQ(stub_set(false), 0);
	vt_syscall_trap_stub_sync(&vcpu);
	ASSERT_EQ(arm(true, 0, "bash"), (uint64_t)VTICE_VMCALL_OK);
	EXPECT_TRUE(vt_syscall_trap_kernel_armed(&vcpu));
}

TEST_F(SyscallStubTrap, TheStubsOffLeavesTheKernelSidesTrapAlone)
{
	ASSERT_EQ(arm(true, 0, "bash"), (uint64_t)VTICE_VMCALL_OK);
	ASSERT_EQ(stub_set(false), 0);	// a detach with nothing of the stub's armed
	vt_syscall_trap_stub_sync(&vcpu);
	EXPECT_TRUE(ud_exits());
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_EFER], kEferGuest & ~1ull);
}

// A CPU taken offline and back keeps its vCPU state; its fresh VMCS is not
// armed, and the stub's trap arms again as the CPU leaves its next stop.
TEST_F(SyscallStubTrap, ACpuBackOnlineArmsAgainAtItsNextSync)
{
	ASSERT_EQ(stub_set(true), 0);
	vt_syscall_trap_stub_sync(&vcpu);
	ASSERT_TRUE(ud_exits());
	ASSERT_EQ(vt_vcpu_devirtualize(&vcpu), 0);
	ASSERT_EQ(vt_vcpu_virtualize(&vcpu), 0);
	EXPECT_FALSE(vcpu.sys.armed);
	vt_syscall_trap_stub_sync(&vcpu);
	EXPECT_TRUE(vcpu.sys.armed);
	EXPECT_TRUE(ud_exits());
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_EFER], kEferGuest & ~1ull);
}

TEST_F(SyscallStubTrap, ABadStringSlotIsRefusedAndArmsNothing)
{
	EXPECT_EQ(stub_set(true, "", 257 | (7u << 12)), -VT_EINVAL) << "arguments 1..6";
	vt_syscall_trap_stub_sync(&vcpu);
	EXPECT_FALSE(ud_exits());
}

TEST_F(SyscallStubTrap, WhetherACpuCanArmFollowsTheEntryControlsAndCet)
{
	EXPECT_TRUE(vt_syscall_trap_can_arm(&hv, 0));
	EXPECT_FALSE(vt_syscall_trap_can_arm(&hv, X86_CR4_CET)) << "no CET state switched at entry";
	hv.ctls.entry |= VM_ENTRY_LOAD_CET_STATE;
	EXPECT_TRUE(vt_syscall_trap_can_arm(&hv, X86_CR4_CET));
	hv.ctls.entry &= ~VM_ENTRY_LOAD_IA32_EFER;
	EXPECT_FALSE(vt_syscall_trap_can_arm(&hv, 0));
}

TEST_F(SyscallTrap, SysretqReturnsToUserModeAsTheSdmSays)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	vt_guest_regs r = kernel_sysret(3);
	ASSERT_TRUE(ud_exit(r));
	auto &c = cpu();
	EXPECT_EQ(c.vmcs[VM_ENTRY_INTR_INFO_FIELD], 0u);
	EXPECT_EQ(c.vmcs[GUEST_RIP], kUserRip + 2);
	EXPECT_EQ(c.vmcs[GUEST_RFLAGS], 0x246u);
	EXPECT_EQ(c.vmcs[GUEST_CS_SELECTOR], 0x33u) << "STAR[63:48] + 16, RPL 3";
	EXPECT_EQ(c.vmcs[GUEST_SS_SELECTOR], 0x2bu) << "STAR[63:48] + 8, RPL 3";
	EXPECT_EQ(c.vmcs[GUEST_CS_AR_BYTES], 0xa0fbu) << "user CS rights";
	EXPECT_EQ(c.vmcs[GUEST_SS_AR_BYTES], 0xc0f3u) << "user SS rights: CPL 3";
	EXPECT_EQ(r.rax, 3u);
	auto recs = records();
	ASSERT_EQ(recs.size(), 3u);
	EXPECT_EQ(recs[0].type, VTICE_REC_SYSCALL_EXIT);
	EXPECT_EQ(recs[0].u.syscall.nr, VTICE_SYSCALL_NR_UNKNOWN);
	EXPECT_EQ(recs[0].u.syscall.arg, 3u);
	EXPECT_EQ(recs[1].u.raw[1], kTask) << "pairs the exit with its entry";
}

TEST_F(SyscallTrap, SysretWithoutRexWReturnsToCompatibilityMode)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	code_at(kKernelCode + (kSysretRip & 0xfff), {0x0f, 0x07});
	vt_guest_regs r = kernel_sysret();
	r.rcx = 0xffffffff00001234ull;
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1234u) << "RIP = ECX";
	EXPECT_EQ(cpu().vmcs[GUEST_CS_SELECTOR], 0x23u);
	EXPECT_EQ(cpu().vmcs[GUEST_CS_AR_BYTES], 0xc0fbu) << "32-bit code: D set, L clear";
}

TEST_F(SyscallTrap, SysretFaultsFromUserModeOrToANonCanonicalAddress)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	vt_guest_regs r = kernel_sysret();
	r.rcx = 0x0000800000000000ull;
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(entry_event(), kInjectGP);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], kSysretRip);
	r = kernel_sysret();
	guest_user_mode();
	cpu().vmcs[GUEST_RIP] = kSysretRip;
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(entry_event(), kInjectGP) << "SYSRET at CPL 3 is #GP(0)";
	EXPECT_EQ(records().size(), 0u);
	EXPECT_EQ(vcpu.counts->syscalls_seen, 0u);
}

TEST_F(SyscallTrap, SysretLoadingTfTrapsRightAfterIt)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	vt_guest_regs r = kernel_sysret();
	r.r11 = 0x346;	// TF
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(cpu().vmcs[GUEST_RFLAGS], 0x346u);
	EXPECT_TRUE(cpu().vmcs[GUEST_PENDING_DBG_EXCEPTIONS] & (1u << 14)) << "BS pending";
}

TEST_F(SyscallTrap, OtherUndefinedOpcodesReachTheGuest)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	code_at(kUserCode, {0x0f, 0x0b});	// ud2
	vt_guest_regs r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(entry_event(), kInjectUD);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], kUserRip);
	EXPECT_EQ(r.rax, 257u);
	code_at(kUserCode, {0xf0, 0x0f, 0x05});	// lock syscall: #UD on any CPU
	r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(entry_event(), kInjectUD);
	EXPECT_EQ(records().size(), 0u);
}

TEST_F(SyscallTrap, PrefixesAreSkippedAndCountInTheLength)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	code_at(kUserCode, {0x66, 0x2e, 0x48, 0x0f, 0x05});
	vt_guest_regs r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(r.rcx, kUserRip + 5);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], kLstar);
}

TEST_F(SyscallTrap, SyscallOutside64BitModeIsTheGuestsUd)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	vt_guest_regs r = user_syscall();
	cpu().vmcs[GUEST_CS_AR_BYTES] = 0xc0fb;	// 32-bit compatibility mode
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(entry_event(), kInjectUD) << "Intel: SYSCALL #UDs in compatibility mode";
}

TEST_F(SyscallTrap, GuestSeesItsOwnSceAndItsOwnChoiceToClearIt)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	guest_kernel_mode();
	vt_guest_regs r{};
	r.rcx = MSR_EFER;
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_READ, 0, r));
	EXPECT_EQ(r.rax, kEferGuest) << "SCE reads back set";
	r = {};
	r.rcx = MSR_EFER;
	r.rax = kEferGuest & ~1ull;	// the guest turns SYSCALL off
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_WRITE, 0, r));
	EXPECT_EQ(entry_event(), 0u);
	r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(entry_event(), kInjectUD) << "SYSCALL with SCE clear is #UD";
	ASSERT_EQ(arm(false), (uint64_t)VTICE_VMCALL_OK);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_EFER], kEferGuest & ~1ull) << "disarming keeps the guest's choice";
}

TEST_F(SyscallTrap, EferWritesTheCpuWouldRefuseRaiseGp)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	guest_kernel_mode();
	cpu().vmcs[GUEST_CR0] |= 1ull << 31;
	vt_guest_regs r{};
	r.rcx = MSR_EFER;
	r.rax = kEferGuest | (1u << 2);	// reserved
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_WRITE, 0, r));
	EXPECT_EQ(entry_event(), kInjectGP);
	cpu().vmcs[VM_ENTRY_INTR_INFO_FIELD] = 0;
	r.rax = kEferGuest & ~(1ull << 8);	// LME off with paging on
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_WRITE, 0, r));
	EXPECT_EQ(entry_event(), kInjectGP);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_EFER], kEferGuest & ~1ull);
}

TEST_F(SyscallTrap, FilterByCommOrPidRecordsOnlyThatTask)
{
	ASSERT_EQ(arm(true, 0, "other"), (uint64_t)VTICE_VMCALL_OK);
	vt_guest_regs r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(records().size(), 0u) << "vtsys is not 'other'";
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], kLstar) << "executed all the same";
	EXPECT_EQ(vcpu.counts->syscalls_seen, 1u);
	ASSERT_EQ(arm(false), (uint64_t)VTICE_VMCALL_OK);
	ASSERT_EQ(arm(true, 4240), (uint64_t)VTICE_VMCALL_OK);	// the tgid
	r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(records().size(), 6u);
	ASSERT_EQ(arm(false), (uint64_t)VTICE_VMCALL_OK);
	ASSERT_EQ(arm(true, 4242, "vtsys"), (uint64_t)VTICE_VMCALL_OK);
	r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(records().size(), 12u);
}

// VTICE_VMCALL_SYSCALL_NUMBERS: with a set, only its syscalls are
// recorded; an entry by RAX, an exit by the number the entry code saved in
// the task's pt_regs (RAX is the return value by then), and an exit whose
// number cannot be read is kept. Every syscall is executed all the same.
TEST_F(SyscallTrap, ASetOfNumbersRecordsOnlyItsSyscallsBothWays)
{
	auto numbers = [&](uint64_t word, uint64_t bits) {
		return keyed_vmcall(VTICE_VMCALL_SYSCALL_NUMBERS, word, bits).rax;
	};
	EXPECT_EQ(numbers(VTICE_VMCALL_SYSCALL_NUMBERS_ALL + 1, 0), (uint64_t)VTICE_VMCALL_EINVAL);
	ASSERT_EQ(numbers(0, 1), (uint64_t)VTICE_VMCALL_OK);	// read (0) alone
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	vt_guest_regs r = user_syscall();	// openat (257)
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], kLstar) << "executed, unrecorded";
	EXPECT_EQ(records().size(), 0u);
	set_orig_ax(257);
	r = kernel_sysret(3);
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(records().size(), 0u) << "openat's exit: orig_ax is not in the set";
	ASSERT_EQ(numbers(4, 2), (uint64_t)VTICE_VMCALL_OK);	// and openat: 4 * 64 + 1
	r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	ASSERT_EQ(records().size(), 6u) << "openat's entry now";
	r = kernel_sysret(3);
	ASSERT_TRUE(ud_exit(r));
	auto recs = records();
	ASSERT_EQ(recs.size(), 9u) << "...and its exit";
	EXPECT_EQ(recs[6].type, VTICE_REC_SYSCALL_EXIT);
	set_orig_ax(~0ull);	// a syscall seccomp or ptrace skipped
	r = kernel_sysret(3);
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(records().size(), 12u) << "an exit without a number is kept";
	put(kTaskPage + kStackOff, &kTask, 8);	// a stack pointer whose top is unmapped
	r = kernel_sysret(3);
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(records().size(), 15u) << "so is one whose number cannot be read";
	EXPECT_EQ(vcpu.counts->syscalls_seen, 6u);
	ASSERT_EQ(numbers(VTICE_VMCALL_SYSCALL_NUMBERS_ALL, 0), (uint64_t)VTICE_VMCALL_OK);
	set_orig_ax(257);
	put(kTaskPage + kStackOff, &kKernelStack, 8);
	r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(records().size(), 21u) << "ALL: every syscall again";
	EXPECT_FALSE(hv.sys_numbers.chosen);
}

TEST_F(SyscallTrap, UnreadableTaskIsLeftOutAndMatchesNoFilter)
{
	vcpu.sys.current_task = 0xffff888012345000ull;	// not mapped
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	vt_guest_regs r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	auto recs = records();
	ASSERT_EQ(recs.size(), 4u) << "no TASK or COMM";
	EXPECT_EQ(recs[0].flags, 3u);
	ASSERT_EQ(arm(false), (uint64_t)VTICE_VMCALL_OK);
	ASSERT_EQ(arm(true, 4242), (uint64_t)VTICE_VMCALL_OK);
	r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	EXPECT_EQ(records().size(), 4u);
}

TEST_F(SyscallTrap, AFullRingDropsWholeEventsAndSaysSo)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	// 64 records: ten 6-record events fit, the eleventh does not.
	for (int i = 0; i < 11; i++) {
		vt_guest_regs r = user_syscall();
		ASSERT_TRUE(ud_exit(r));
	}
	EXPECT_EQ(vcpu.ring.hdr->head, 60u);
	EXPECT_EQ(vcpu.ring.hdr->lost, 6u);
	EXPECT_EQ(vcpu.counts->syscalls_recorded, 10u);
	vcpu.ring.hdr->tail = 60;	// the consumer catches up
	vt_guest_regs r = user_syscall();
	ASSERT_TRUE(ud_exit(r));
	auto recs = records();
	ASSERT_EQ(recs.size(), 67u);
	EXPECT_EQ(recs[60].type, VTICE_REC_LOST);
	EXPECT_EQ(recs[60].u.lost.count, 6u);
	EXPECT_EQ(recs[61].type, VTICE_REC_SYSCALL_ENTER);
}

TEST_F(SyscallTrap, LeavingVmxGivesTheKernelBackItsSce)
{
	ASSERT_EQ(arm(true), (uint64_t)VTICE_VMCALL_OK);
	cpu().msrs[MSR_EFER] = 0;
	ASSERT_EQ(vt_vcpu_devirtualize(&vcpu), 0);
	EXPECT_EQ(cpu().msrs[MSR_EFER], kEferGuest) << "SYSCALL works again without the hypervisor";
}

}  // namespace
