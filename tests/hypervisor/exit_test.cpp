// VM-exit dispatch and the handlers by family, on a virtualized fake CPU.
#include "hv_fixture.hpp"

using namespace vtice::fake;

class Exit : public HvFixture {
protected:
	void SetUp() override
	{
		HvFixture::SetUp();
		virtualize();
		guest_kernel_mode();
	}
};

TEST(ExitTable, DispatchByBasicReason)
{
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_CPUID), vt_handle_cpuid);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_MSR_READ), vt_handle_rdmsr);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_MSR_WRITE), vt_handle_wrmsr);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_CR_ACCESS), vt_handle_cr_access);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_XSETBV), vt_handle_xsetbv);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_INVD), vt_handle_invd);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_INVPCID), vt_handle_invpcid);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_EPT_VIOLATION), vt_handle_ept_violation);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_EPT_MISCONFIG), vt_handle_ept_misconfig);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_EXCEPTION_NMI), vt_handle_exception_nmi);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_NMI_WINDOW), vt_handle_nmi_window);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_MONITOR_TRAP_FLAG), vt_handle_mtf);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_TRIPLE_FAULT), vt_handle_triple_fault);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_VMCALL), vt_handle_vmcall);
	for (uint32_t r : {EXIT_REASON_VMCLEAR, EXIT_REASON_VMLAUNCH, EXIT_REASON_VMPTRLD,
			   EXIT_REASON_VMPTRST, EXIT_REASON_VMREAD, EXIT_REASON_VMRESUME,
			   EXIT_REASON_VMWRITE, EXIT_REASON_VMOFF, EXIT_REASON_VMON,
			   EXIT_REASON_INVEPT, EXIT_REASON_INVVPID, EXIT_REASON_VMFUNC,
			   EXIT_REASON_GETSEC})
		EXPECT_EQ(vt_exit_lookup(r), vt_handle_vmx_instruction) << r;
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_IO_INSTRUCTION), vt_handle_io);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_PREEMPTION_TIMER), vt_handle_preempt_timer);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_DR_ACCESS), vt_handle_dr_access);
	// never enabled: give the CPU back rather than guess
	for (uint32_t r : {(uint32_t)EXIT_REASON_HLT, 79u, 1000u})
		EXPECT_EQ(vt_exit_lookup(r), vt_handle_fatal) << r;
}

// Issue 23: the kernel saw VMX at boot (/proc/cpuinfo); hiding it later
// told any program that something took it.
TEST_F(Exit, CpuidShowsVmxAsAtBootAndAdvancesRip)
{
	cpu().cpuid[{1, 0}].ecx |= 1u << 31;	// as if the CPU said "hypervisor"
	vt_guest_regs r{};
	r.rax = 1;
	r.rcx = 0;
	r.rbx = 0xdeadbeefdeadbeefull;
	ASSERT_TRUE(vm_exit(EXIT_REASON_CPUID, 0, r));
	EXPECT_EQ(r.rcx, 0x7ffefbffu) << "VMX bit as bare, the rest untouched";
	EXPECT_EQ(r.rcx & (1u << 31), 0u) << "no hypervisor-present bit";
	EXPECT_EQ(r.rax, 0x50654u);
	EXPECT_EQ(r.rbx, 0x00010800u) << "32-bit result zero-extends";
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1002u);
	EXPECT_EQ(entry_event(), 0u);
}

TEST_F(Exit, CpuidOtherLeavesPassThrough)
{
	vt_guest_regs r{};
	r.rax = 0xd;
	ASSERT_TRUE(vm_exit(EXIT_REASON_CPUID, 0, r));
	EXPECT_EQ(r.rax, 0x2e7u);
	r = {};
	r.rax = 0x40000000;	// no hypervisor leaves: whatever the bare CPU says
	ASSERT_TRUE(vm_exit(EXIT_REASON_CPUID, 0, r));
	EXPECT_EQ(r.rbx, 0u);
}

TEST_F(Exit, CountsPerReason)
{
	vt_guest_regs r{};
	for (int i = 0; i < 3; i++)
		vm_exit(EXIT_REASON_CPUID, 0, r);
	vm_exit(EXIT_REASON_VMON, 0, r);
	EXPECT_EQ(vcpu.counts->by_reason[EXIT_REASON_CPUID], 3u);
	EXPECT_EQ(vcpu.counts->by_reason[EXIT_REASON_VMON], 1u);
	EXPECT_EQ(vcpu.counts->total, 4u);
}

// Issue 23: FEATURE_CONTROL read 0x1 under vtice and 0x5 bare, and the VMX
// MSRs raised #GP (0x492 and 0x493 read through all the same).
TEST_F(Exit, VmxMsrsAndFeatureControlRunNatively)
{
	const uint8_t *bm = vcpu.msr_bitmap;
	auto exits = [&](uint32_t msr) {
		return ((bm[msr / 8] | bm[2048 + msr / 8]) >> (msr % 8)) & 1;
	};
	for (uint32_t msr = MSR_IA32_VMX_BASIC; msr <= 0x4ff; msr++)
		EXPECT_FALSE(exits(msr)) << std::hex << msr;
	EXPECT_FALSE(exits(MSR_IA32_FEAT_CTL));
}

TEST_F(Exit, DebugctlIsShadowed)
{
	vcpu.debugctl_owned = DEBUGCTLMSR_BTF;
	vt_guest_regs r{};
	r.rcx = MSR_IA32_DEBUGCTLMSR;
	r.rax = DEBUGCTLMSR_LBR;
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_WRITE, 0, r));
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_DEBUGCTL], DEBUGCTLMSR_LBR | DEBUGCTLMSR_BTF)
		<< "the guest's value plus the bits the hypervisor owns";
	r.rax = r.rdx = 0;
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_READ, 0, r));
	EXPECT_EQ(r.rax, DEBUGCTLMSR_LBR) << "the guest reads back what it wrote";
	EXPECT_EQ(cpu().msrs[MSR_IA32_DEBUGCTLMSR], 0u) << "root's DEBUGCTL stays 0";
}

TEST_F(Exit, DebugctlReadsBackWhatTheCpuKeeps)
{
	// Like Bochs: WRMSR accepted, nothing sticks. The guest must see the
	// same 0 it would see without the hypervisor, even with BTF owned.
	cpu().msr_sticky_mask[MSR_IA32_DEBUGCTLMSR] = 0;
	vcpu.debugctl_owned = DEBUGCTLMSR_BTF;
	vt_guest_regs r{};
	r.rcx = MSR_IA32_DEBUGCTLMSR;
	r.rax = DEBUGCTLMSR_BTF | DEBUGCTLMSR_LBR;
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_WRITE, 0, r));
	r.rax = 0xff;
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_READ, 0, r));
	EXPECT_EQ(r.rax, 0u);
}

TEST_F(Exit, DebugctlReservedBitsFault)
{
	cpu().fail.insert("wrmsr");
	vt_guest_regs r{};
	r.rcx = MSR_IA32_DEBUGCTLMSR;
	r.rax = 1ull << 31;
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_WRITE, 0, r));
	EXPECT_EQ(entry_event(), kInjectGP);
}

TEST_F(Exit, UnknownMsrFaultIsReflected)
{
	vt_guest_regs r{};
	r.rcx = 0x40000000;	// no such MSR on this CPU
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_READ, 0, r));
	EXPECT_EQ(entry_event(), kInjectGP);
	cpu().msrs[0xc0010000] = 0x55;	// present: passed through
	r.rcx = 0xc0010000;
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_READ, 0, r));
	EXPECT_EQ(r.rax, 0x55u);
}

// Issue 23: setting CR4.VMXE raised #GP, as on a CPU without VMX, while
// CPUID said VMX at boot. Now the kernel sets it, reads it back, and its
// VMXON is refused (#GP), as with VMX held by another VMM; with VMXE clear
// VMXON is #UD as on any CPU.
TEST_F(Exit, Cr4VmxeIsTheKernelsAndItsVmxonIsRefused)
{
	uint64_t view = cpu().vmcs[CR4_READ_SHADOW];
	vt_guest_regs r{};
	ASSERT_TRUE(vm_exit(EXIT_REASON_VMON, 0, r));
	EXPECT_EQ(entry_event(), kInjectUD) << "VMXON with CR4.VMXE clear";
	r.rdx = view | X86_CR4_VMXE;
	// MOV to CR4 from RDX: CR 4, type 0, register 2 (SDM 3C Table 28-3)
	ASSERT_TRUE(vm_exit(EXIT_REASON_CR_ACCESS, 4 | (2 << 8), r));
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_EQ(cpu().vmcs[CR4_READ_SHADOW], view | X86_CR4_VMXE) << "reads back what it set";
	EXPECT_EQ(vt_guest_cr4(), view | X86_CR4_VMXE);
	ASSERT_TRUE(vm_exit(EXIT_REASON_VMON, 0, r));
	EXPECT_EQ(entry_event(), kInjectGP) << "VMXON refused";
	r.rdx = view;
	ASSERT_TRUE(vm_exit(EXIT_REASON_CR_ACCESS, 4 | (2 << 8), r));
	EXPECT_EQ(cpu().vmcs[GUEST_CR4], view | X86_CR4_VMXE) << "the CPU keeps VMXE";
	EXPECT_EQ(vt_guest_cr4(), view);
}

TEST_F(Exit, OtherVmxInstructionsAreUdOutsideVmxOperation)
{
	for (uint32_t reason : {EXIT_REASON_VMCLEAR, EXIT_REASON_VMPTRLD, EXIT_REASON_VMREAD,
				EXIT_REASON_VMLAUNCH, EXIT_REASON_VMOFF, EXIT_REASON_INVEPT}) {
		vt_guest_regs r{};
		ASSERT_TRUE(vm_exit(reason, 0, r));
		EXPECT_EQ(entry_event(), kInjectUD) << reason;
	}
}

// Issue 23: clearing CR0.NE raised #GP under vtice (the CPU's VMX fixed
// bit), and succeeded on the bare CPU.
TEST_F(Exit, Cr0NeIsTheKernelsToClear)
{
	uint64_t cr0 = cpu().vmcs[GUEST_CR0];
	ASSERT_EQ(cpu().vmcs[CR0_GUEST_HOST_MASK], X86_CR0_NE) << "NE owned, PE and PG not";
	vt_guest_regs r{};
	r.rsi = cr0 & ~X86_CR0_NE;
	ASSERT_TRUE(vm_exit(EXIT_REASON_CR_ACCESS, 0 | (6 << 8), r));	// MOV CR0, RSI
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_EQ(cpu().vmcs[GUEST_CR0], cr0) << "the CPU keeps NE";
	EXPECT_EQ(cpu().vmcs[CR0_READ_SHADOW], cr0 & ~X86_CR0_NE);
	EXPECT_EQ(vt_guest_cr0(), cr0 & ~X86_CR0_NE);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1002u);
}

TEST_F(Exit, Cr0WritesTheCpuRefusesRaiseGp)
{
	uint64_t cr0 = cpu().vmcs[GUEST_CR0];
	for (uint64_t bad : {(cr0 & ~X86_CR0_NE) | X86_CR0_NW,		// NW without CD
			     (cr0 & ~X86_CR0_NE) | (1ull << 32),		// reserved
			     (cr0 & ~X86_CR0_NE & ~X86_CR0_PG)}) {		// paging off with it
		vt_guest_regs r{};
		r.rsi = bad;
		ASSERT_TRUE(vm_exit(EXIT_REASON_CR_ACCESS, 0 | (6 << 8), r));
		EXPECT_EQ(entry_event(), kInjectGP) << std::hex << bad;
		EXPECT_EQ(cpu().vmcs[GUEST_CR0], cr0);
		EXPECT_EQ(cpu().vmcs[CR0_READ_SHADOW], cr0);
	}
}

TEST_F(Exit, Cr4WriteKeepsVmxeHidden)
{
	uint64_t guest_view = cpu().vmcs[CR4_READ_SHADOW] ^ (1ull << 7);	// toggle PGE
	vt_guest_regs r{};
	r.rbx = guest_view;
	ASSERT_TRUE(vm_exit(EXIT_REASON_CR_ACCESS, 4 | (3 << 8), r));
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_EQ(cpu().vmcs[GUEST_CR4], guest_view | X86_CR4_VMXE);
	EXPECT_EQ(cpu().vmcs[CR4_READ_SHADOW], guest_view);
	EXPECT_TRUE(cpu().traced("invvpid")) << "PGE change flushes the guest TLB";
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1002u);
}

TEST_F(Exit, Cr3StoreAndLoad)
{
	cpu().vmcs[GUEST_CR3] = 0x1234000;
	vt_guest_regs r{};
	ASSERT_TRUE(vm_exit(EXIT_REASON_CR_ACCESS, 3 | (1 << 4) | (9 << 8), r));	// MOV R9, CR3
	EXPECT_EQ(r.r9, 0x1234000u);
	r.rsi = 0x5678000 | X86_CR3_PCID_NOFLUSH;
	ASSERT_TRUE(vm_exit(EXIT_REASON_CR_ACCESS, 3 | (6 << 8), r));	// MOV CR3, RSI
	EXPECT_EQ(cpu().vmcs[GUEST_CR3], 0x5678000u) << "bit 63 is not part of CR3";
}

TEST_F(Exit, VmxInstructionsRaiseUd)
{
	vt_guest_regs r{};
	r.rax = 0x1234;
	ASSERT_TRUE(vm_exit(EXIT_REASON_VMON, 0, r));
	EXPECT_EQ(entry_event(), kInjectUD);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1000u);
	EXPECT_EQ(r.rax, 0x1234u);
}

TEST_F(Exit, XsetbvValidatesLikeHardware)
{
	cpu().vmcs[GUEST_CR4] |= X86_CR4_OSXSAVE;
	vt_guest_regs r{};
	r.rax = 0x7;	// x87 | SSE | AVX: supported per CPUID.0xD (0x2e7)
	ASSERT_TRUE(vm_exit(EXIT_REASON_XSETBV, 0, r));
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_EQ(cpu().xcr0, 0x7u);
	for (uint64_t bad : {0x6ull, 0x5ull, 0x8ull << 32, 0x27ull}) {	// no x87; AVX w/o SSE;
		r.rax = (uint32_t)bad;					// unsupported; partial AVX-512
		r.rdx = bad >> 32;
		ASSERT_TRUE(vm_exit(EXIT_REASON_XSETBV, 0, r));
		EXPECT_EQ(entry_event(), kInjectGP) << std::hex << bad;
	}
	r.rax = 7;
	r.rdx = 0;
	r.rcx = 1;	// only XCR0 exists here
	ASSERT_TRUE(vm_exit(EXIT_REASON_XSETBV, 0, r));
	EXPECT_EQ(entry_event(), kInjectGP);
	cpu().vmcs[GUEST_CR4] &= ~X86_CR4_OSXSAVE;
	r.rcx = 0;
	ASSERT_TRUE(vm_exit(EXIT_REASON_XSETBV, 0, r));
	EXPECT_EQ(entry_event(), kInjectUD) << "CR4.OSXSAVE clear";
}

TEST_F(Exit, InvdWritesBack)
{
	vt_guest_regs r{};
	ASSERT_TRUE(vm_exit(EXIT_REASON_INVD, 0, r));
	EXPECT_TRUE(cpu().traced("wbinvd"));
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1002u);
}

TEST_F(Exit, InvpcidFlushesOrFaults)
{
	vt_guest_regs r{};
	cpu().vmcs[VMX_INSTRUCTION_INFO] = 3u << 28;	// type in RBX
	r.rbx = 2;
	ASSERT_TRUE(vm_exit(EXIT_REASON_INVPCID, 0, r));
	EXPECT_TRUE(cpu().traced("invvpid"));
	r.rbx = 4;
	ASSERT_TRUE(vm_exit(EXIT_REASON_INVPCID, 0, r));
	EXPECT_EQ(entry_event(), kInjectGP);
}

TEST_F(Exit, ExceptionIsReinjectedWithoutCallback)
{
	// #BP from INT3: software exception (type 6) needs the instruction length
	cpu().vmcs[VM_EXIT_INTR_INFO] = 3 | (6u << 8) | (1u << 31);
	cpu().vmcs[VM_EXIT_INSTRUCTION_LEN] = 1;
	vt_guest_regs r{};
	ASSERT_TRUE(vm_exit(EXIT_REASON_EXCEPTION_NMI, 0, r));
	EXPECT_EQ(entry_event(), 3 | (6u << 8) | (1u << 31));
	EXPECT_EQ(cpu().vmcs[VM_ENTRY_INSTRUCTION_LEN], 1u);
	// #PF with error code
	cpu().vmcs[VM_EXIT_INTR_INFO] = 14 | (3u << 8) | (1u << 11) | (1u << 31);
	cpu().vmcs[VM_EXIT_INTR_ERROR_CODE] = 2;
	ASSERT_TRUE(vm_exit(EXIT_REASON_EXCEPTION_NMI, 0xdead000, r));
	EXPECT_EQ(entry_event(), 14 | (3u << 8) | (1u << 11) | (1u << 31));
	EXPECT_EQ(cpu().vmcs[VM_ENTRY_EXCEPTION_ERROR_CODE], 2u);
	// A #PF that exits leaves CR2 alone (SDM 3C 27.1): the handler reads it there.
	EXPECT_EQ(cpu().cr2, 0xdead000u);
}

namespace {
int g_exceptions, g_mtfs, g_ept;
bool on_exception(vt_vcpu *, vt_exit *, u32) { return ++g_exceptions, true; }
bool on_mtf(vt_vcpu *, vt_exit *) { return ++g_mtfs, true; }
bool on_ept(vt_vcpu *, vt_exit *, u64, u64) { return ++g_ept, true; }
const vt_callbacks kDebugger = {on_exception, on_ept, on_mtf, nullptr, nullptr};
}  // namespace

TEST_F(Exit, CallbacksConsumeEvents)
{
	g_exceptions = g_mtfs = g_ept = 0;
	vt_hv_set_callbacks(&hv, &kDebugger);
	cpu().vmcs[VM_EXIT_INTR_INFO] = 1 | (3u << 8) | (1u << 31);	// #DB
	vt_guest_regs r{};
	ASSERT_TRUE(vm_exit(EXIT_REASON_EXCEPTION_NMI, 0, r));
	EXPECT_EQ(g_exceptions, 1);
	EXPECT_EQ(entry_event(), 0u) << "consumed: not re-injected";
	cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] |= CPU_BASED_MONITOR_TRAP_FLAG;
	ASSERT_TRUE(vm_exit(EXIT_REASON_MONITOR_TRAP_FLAG, 0, r));
	EXPECT_EQ(g_mtfs, 1);
	EXPECT_TRUE(cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_MONITOR_TRAP_FLAG);
	ASSERT_TRUE(vm_exit(EXIT_REASON_EPT_VIOLATION, EPT_VIOLATION_ACC_WRITE, r));
	EXPECT_EQ(g_ept, 1);
}

TEST_F(Exit, MtfWithoutCallbackStops)
{
	cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] |= CPU_BASED_MONITOR_TRAP_FLAG;
	vt_guest_regs r{};
	ASSERT_TRUE(vm_exit(EXIT_REASON_MONITOR_TRAP_FLAG, 0, r));
	EXPECT_FALSE(cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_MONITOR_TRAP_FLAG);
}

TEST_F(Exit, NmiWindowDeliversPendingNmi)
{
	vcpu.nmi_pending = true;
	cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] |= CPU_BASED_NMI_WINDOW_EXITING;
	vt_guest_regs r{};
	ASSERT_TRUE(vm_exit(EXIT_REASON_NMI_WINDOW, 0, r));
	EXPECT_EQ(entry_event(), 2 | (2u << 8) | (1u << 31));
	EXPECT_FALSE(vcpu.nmi_pending);
	EXPECT_FALSE(cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_NMI_WINDOW_EXITING);
}

TEST_F(Exit, UnhandledEptViolationLeavesVmx)
{
	vt_guest_regs r{};
	cpu().vmcs[GUEST_PHYSICAL_ADDRESS] = 1ull << 45;
	EXPECT_FALSE(vm_exit(EXIT_REASON_EPT_VIOLATION, EPT_VIOLATION_ACC_READ, r));
	EXPECT_FALSE(cpu().in_vmx);
	EXPECT_EQ(r.rip, 0x1000u) << "the access is retried natively";
}

// Recorded for the kernel to print later (root_log.h), never printed from
// VMX root: the OS layer's log is not called at all.
TEST_F(Exit, TripleFaultIsRecordedThenLeavesVmx)
{
	vt_guest_regs r{};
	cpu().vmcs[GUEST_RIP] = 0xffffffff81001234ull;
	size_t lines = log_lines().size();
	EXPECT_FALSE(vm_exit(EXIT_REASON_TRIPLE_FAULT, 0, r));
	EXPECT_FALSE(cpu().in_vmx);
	EXPECT_EQ(log_lines().size(), lines) << "no printk from VMX root";
	const vt_root_log &log = vcpu.counts->log;
	ASSERT_EQ(log.written, 1u);
	EXPECT_EQ(log.ev[0].code, (u32)VT_RE_TRIPLE_FAULT);
	EXPECT_EQ(log.ev[0].arg[0], 0xffffffff81001234ull);
}

TEST_F(Exit, FailedEntryLeavesVmx)
{
	vt_guest_regs r{};
	EXPECT_FALSE(vm_exit(EXIT_REASON_INVALID_STATE | VMX_EXIT_REASONS_FAILED_VMENTRY, 0, r));
	EXPECT_FALSE(cpu().in_vmx);
}

TEST_F(Exit, DebuggerControls)
{
	ASSERT_EQ(vt_set_exception_intercept(X86_TRAP_BP, true), 0);
	ASSERT_EQ(vt_set_exception_intercept(X86_TRAP_DB, true), 0);
	EXPECT_EQ(cpu().vmcs[EXCEPTION_BITMAP], (1u << 3) | (1u << 1));
	ASSERT_EQ(vt_set_exception_intercept(X86_TRAP_BP, false), 0);
	EXPECT_EQ(cpu().vmcs[EXCEPTION_BITMAP], 1u << 1);
	EXPECT_EQ(vt_set_exception_intercept(32, true), -VT_EINVAL);
	// Bochs's TRUE_PROCBASED has no MTF: refused, control untouched
	EXPECT_EQ(vt_set_mtf(&vcpu, true), -VT_EOPNOTSUPP);
	EXPECT_FALSE(cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_MONITOR_TRAP_FLAG);
	hv.caps.flags |= VTICE_CAP_MTF;
	ASSERT_EQ(vt_set_mtf(&vcpu, true), 0);
	EXPECT_TRUE(cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_MONITOR_TRAP_FLAG);
	ASSERT_EQ(vt_set_mtf(&vcpu, false), 0);
	EXPECT_FALSE(cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_MONITOR_TRAP_FLAG);
}

TEST_F(Exit, OwnedDebugctlBitsNeedTheProbe)
{
	vcpu.debugctl_shadow = DEBUGCTLMSR_LBR;
	EXPECT_EQ(vt_set_debugctl_owned(&vcpu, DEBUGCTLMSR_BTF), -VT_EOPNOTSUPP)
		<< "BTF not honoured (probe said no)";
	hv.caps.flags |= VTICE_CAP_DEBUGCTL_BTF;
	ASSERT_EQ(vt_set_debugctl_owned(&vcpu, DEBUGCTLMSR_BTF), 0);
	EXPECT_EQ(cpu().vmcs[GUEST_IA32_DEBUGCTL], DEBUGCTLMSR_LBR | DEBUGCTLMSR_BTF);
	vt_guest_regs r{};
	r.rcx = MSR_IA32_DEBUGCTLMSR;
	ASSERT_TRUE(vm_exit(EXIT_REASON_MSR_READ, 0, r));
	EXPECT_EQ(r.rax, DEBUGCTLMSR_LBR) << "the guest does not see the owned BTF";
}
