// INIT and SIPI under vtice (core/exit_init.c), issue 23: an INIT the kernel
// sends a virtualized CPU must do what it does on the bare CPU. Expected
// values are the SDM's: the INIT state of Vol. 3A 10.1.1 (Table 10-1, INIT
// column), the wait-for-SIPI activity state (3, Vol. 3C 25.4.2), the SIPI
// exit qualification (vector in bits 7:0, 28.2.1) and real-mode start at
// VV00:0000 (Vol. 3A 10.4.4). The fake CPU's CPUID.1:EAX is 0x50654.
#include "hv_fixture.hpp"

namespace vtice::fake {
namespace {

constexpr uint64_t kEferKernel = 0xd01;		// SCE | LME | LMA | NX
constexpr uint64_t kWaitForSipi = 3;

class InitSipi : public HvFixture {
protected:
	vt_guest_regs regs{};

	virtual VmxProfile profile() { return bochs_skylake_x; }

	void SetUp() override
	{
		HvFixture::SetUp();
		seed_vmx(profile());
		virtualize();
		guest_kernel_mode();
		auto &c = cpu();
		c.vmcs[GUEST_IA32_EFER] = kEferKernel;
		c.vmcs[GUEST_CR3] = 0x1234000;
		c.vmcs[GUEST_RFLAGS] = 0x246;
		c.vmcs[GUEST_RSP] = 0xffffc90000003f00ull;
		c.vmcs[GUEST_DR7] = 0x455;
		regs.rax = 1;
		regs.rbx = 2;
		regs.rdx = 3;
		regs.r15 = 4;
	}

	uint64_t vmcs(uint32_t field) { return cpu().vmcs[field]; }

	void init() { ASSERT_TRUE(vm_exit(EXIT_REASON_INIT_SIGNAL, 0, regs)); }
};

TEST(InitSipiTable, BothSignalsHaveHandlers)
{
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_INIT_SIGNAL), vt_handle_init_signal);
	EXPECT_EQ(vt_exit_lookup(EXIT_REASON_SIPI_SIGNAL), vt_handle_sipi_signal);
}

TEST_F(InitSipi, InitWaitsForSipiAtTheResetVector)
{
	init();
	EXPECT_EQ(vmcs(GUEST_ACTIVITY_STATE), kWaitForSipi);
	EXPECT_EQ(vmcs(GUEST_CS_SELECTOR), 0xf000u);
	EXPECT_EQ(vmcs(GUEST_CS_BASE), 0xffff0000u);
	EXPECT_EQ(vmcs(GUEST_CS_LIMIT), 0xffffu);
	EXPECT_EQ(vmcs(GUEST_RIP), 0xfff0u);
	EXPECT_EQ(vmcs(GUEST_RSP), 0u);
	EXPECT_EQ(vmcs(GUEST_RFLAGS), 0x2u);
}

TEST_F(InitSipi, InitClearsGprsButEdxHoldsTheSignature)
{
	init();
	EXPECT_EQ(regs.rdx, 0x50654u);
	EXPECT_EQ(regs.rax, 0u);
	EXPECT_EQ(regs.rbx, 0u);
	EXPECT_EQ(regs.r15, 0u);
}

TEST_F(InitSipi, InitLeavesLongModeAndPaging)
{
	cpu().vmcs[CR0_READ_SHADOW] = 0x80050033;	// a kernel's CR0, CD and NW clear
	cpu().vmcs[GUEST_CR0] = 0x80050033;
	init();
	EXPECT_EQ(vmcs(CR0_READ_SHADOW), 0x10u) << "ET only: CD and NW kept (clear), the rest cleared";
	EXPECT_EQ(vmcs(GUEST_CR0) & 0x80000001u, 0u) << "PE and PG off underneath too";
	EXPECT_EQ(vmcs(GUEST_CR0) & 0x20u, 0x20u) << "NE stays set underneath (CR0_FIXED0)";
	EXPECT_EQ(vmcs(CR4_READ_SHADOW), 0u);
	EXPECT_EQ(vmcs(GUEST_CR4), (uint64_t)X86_CR4_VMXE) << "VMXE only, owned by vtice";
	EXPECT_EQ(vmcs(GUEST_CR3), 0u);
	EXPECT_EQ(vmcs(GUEST_IA32_EFER), 0u);
	EXPECT_EQ(vmcs(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE, 0u) << "LMA = 0 must match the control";
	EXPECT_EQ(vmcs(GUEST_DR7), 0x400u);
}

TEST_F(InitSipi, InitResetsTheDebugRegisters)
{
	auto &c = cpu();
	for (uint64_t &dr : c.dr)
		dr = 0xffffffff81000000ull;	// the kernel's breakpoints, before the INIT
	c.dr6 = 0xffff4ff1;		// BS and B0 left over from a #DB
	init();
	for (int n = 0; n < 4; n++)
		EXPECT_EQ(c.dr[n], 0u) << "DR" << n;
	EXPECT_EQ(c.dr6, 0xffff0ff0u);
	EXPECT_EQ(vmcs(GUEST_DR7), 0x400u);
}

TEST_F(InitSipi, InitKeepsCacheDisableBits)
{
	cpu().vmcs[CR0_READ_SHADOW] = 0xe0000031;	// CD and NW set
	cpu().vmcs[GUEST_CR0] = 0xe0000031;
	init();
	EXPECT_EQ(vmcs(CR0_READ_SHADOW), 0x60000010u);
}

class InitSipiCet : public InitSipi {
protected:
	VmxProfile profile() override { return with_cet(skylake); }
};

TEST_F(InitSipiCet, InitClearsTheCetState)
{
	ASSERT_TRUE(hv.ctls.entry & VM_ENTRY_LOAD_CET_STATE);
	ASSERT_NE(vmcs(GUEST_S_CET), 0u) << "the kernel's IBT";
	init();
	EXPECT_EQ(vmcs(GUEST_S_CET), 0u);
	EXPECT_EQ(vmcs(GUEST_SSP), 0u);
	EXPECT_EQ(vmcs(GUEST_INTR_SSP_TABLE), 0u);
	EXPECT_EQ(vmcs(GUEST_CR4), (uint64_t)X86_CR4_VMXE) << "CR4.CET clear";
}

TEST_F(InitSipi, InitGivesRealModeSegments)
{
	init();
	for (uint32_t sel : {GUEST_ES_SELECTOR, GUEST_SS_SELECTOR, GUEST_DS_SELECTOR, GUEST_FS_SELECTOR,
			     GUEST_GS_SELECTOR}) {
		uint32_t i = (sel - GUEST_ES_SELECTOR) / 2;
		EXPECT_EQ(vmcs(sel), 0u) << i;
		EXPECT_EQ(vmcs(GUEST_ES_BASE + 2 * i), 0u) << i;
		EXPECT_EQ(vmcs(GUEST_ES_LIMIT + 2 * i), 0xffffu) << i;
		EXPECT_EQ(vmcs(GUEST_ES_AR_BYTES + 2 * i), 0x93u) << i << ": present, read/write, accessed";
	}
	EXPECT_EQ(vmcs(GUEST_CS_AR_BYTES), 0x9bu);
	EXPECT_EQ(vmcs(GUEST_LDTR_AR_BYTES), 0x82u);
	EXPECT_EQ(vmcs(GUEST_TR_AR_BYTES), 0x8bu);
	EXPECT_EQ(vmcs(GUEST_GDTR_BASE), 0u);
	EXPECT_EQ(vmcs(GUEST_GDTR_LIMIT), 0xffffu);
	EXPECT_EQ(vmcs(GUEST_IDTR_BASE), 0u);
	EXPECT_EQ(vmcs(GUEST_IDTR_LIMIT), 0xffffu);
}

TEST_F(InitSipi, InitDropsWhatRootHeldForTheGuest)
{
	ASSERT_EQ(vt_hold_events(&vcpu, true), 0);
	cpu().vmcs[VM_EXIT_INTR_INFO] = 0xec | (1u << 31);
	ASSERT_TRUE(vm_exit(EXIT_REASON_EXTERNAL_INTERRUPT, 0, regs));
	init();
	ASSERT_EQ(vt_hold_events(&vcpu, false), 0);
	EXPECT_FALSE(vmcs(CPU_BASED_VM_EXEC_CONTROL) & CPU_BASED_INTR_WINDOW_EXITING)
		<< "the INIT reset the APIC: nothing is left to deliver";
	EXPECT_FALSE(vt_deliver_held_event(&vcpu));
	EXPECT_EQ(entry_event(), 0u);
}

TEST_F(InitSipi, NothingIsInjectedWhileWaitingForSipi)
{
	ASSERT_EQ(vt_gate_events(&vcpu, true), 0);
	init();
	cpu().vmcs[VM_EXIT_INTR_INFO] = 0x31 | (1u << 31);
	ASSERT_TRUE(vm_exit(EXIT_REASON_EXTERNAL_INTERRUPT, 0, regs));
	cpu().vmcs[GUEST_RFLAGS] = 0x202;
	EXPECT_FALSE(vt_deliver_held_event(&vcpu)) << "wait-for-SIPI takes no event (SDM 3C 27.3.1.5)";
	EXPECT_EQ(entry_event(), 0u);
	ASSERT_EQ(vt_gate_events(&vcpu, false), 0);
}

TEST_F(InitSipi, SipiStartsRealModeAtItsVector)
{
	init();
	ASSERT_TRUE(vm_exit(EXIT_REASON_SIPI_SIGNAL, 0x9a, regs));
	EXPECT_EQ(vmcs(GUEST_ACTIVITY_STATE), 0u);
	EXPECT_EQ(vmcs(GUEST_CS_SELECTOR), 0x9a00u);
	EXPECT_EQ(vmcs(GUEST_CS_BASE), 0x9a000u);
	EXPECT_EQ(vmcs(GUEST_CS_LIMIT), 0xffffu);
	EXPECT_EQ(vmcs(GUEST_CS_AR_BYTES), 0x9bu);
	EXPECT_EQ(vmcs(GUEST_RIP), 0u);
	EXPECT_EQ(regs.rdx, 0x50654u) << "a SIPI changes no other register";
}

// A CPU the kernel brings (back) online under vtice runs its real-mode
// trampoline (arch/x86/realmode/rm/trampoline_64.S): MOV to CR0 of
// CR0_STATE without PG (protection on, and NE, which vtice owns, so it
// exits), CR4.PAE and EFER.LME set natively, then CR0_STATE (paging on:
// IA-32e mode, SDM Vol. 3A 10.8.5). vtice refused both writes with #GP,
// and with an error code that real mode cannot take the VM entry failed
// (Bochs, a stealth load's CPU hotplug, 2026-12-03).
TEST_F(InitSipi, TheKernelsTrampolineEntersProtectedThenLongMode)
{
	constexpr uint64_t kCr0State = X86_CR0_PE | 0x2 | X86_CR0_ET | X86_CR0_NE | X86_CR0_WP |
				       (1ull << 18) | X86_CR0_PG;	// MP, AM
	init();
	ASSERT_TRUE(vm_exit(EXIT_REASON_SIPI_SIGNAL, 0x9a, regs));
	regs.rax = 0xdead000000000000ull | (kCr0State & ~X86_CR0_PG);	// upper half: not a 32-bit operand's
	ASSERT_TRUE(vm_exit(EXIT_REASON_CR_ACCESS, 0, regs));	// MOV CR0, EAX
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_EQ(vt_guest_cr0(), kCr0State & ~X86_CR0_PG);
	EXPECT_TRUE(vmcs(GUEST_CR0) & X86_CR0_PE);
	EXPECT_FALSE(vmcs(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE);

	cpu().vmcs[GUEST_CR4] |= X86_CR4_PAE;	// MOV CR4 and WRMSR EFER: no exit
	cpu().vmcs[GUEST_IA32_EFER] = EFER_LME;
	regs.rax = kCr0State;
	ASSERT_TRUE(vm_exit(EXIT_REASON_CR_ACCESS, 0, regs));
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_EQ(vt_guest_cr0(), kCr0State);
	EXPECT_EQ(vmcs(GUEST_IA32_EFER), (uint64_t)(EFER_LME | EFER_LMA)) << "IA-32e mode active";
	EXPECT_TRUE(vmcs(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE);
}

// Paging on with EFER.LME but without CR4.PAE is #GP on the bare CPU; in
// real mode the #GP carries no error code (VM entry refuses one there,
// SDM Vol. 3C 27.2.1.3).
TEST_F(InitSipi, LongModeWithoutPaeIsRefusedWithARealModeGp)
{
	init();
	ASSERT_TRUE(vm_exit(EXIT_REASON_SIPI_SIGNAL, 0x9a, regs));
	cpu().vmcs[GUEST_IA32_EFER] = EFER_LME;
	regs.rax = X86_CR0_PE | X86_CR0_NE | X86_CR0_PG;
	ASSERT_TRUE(vm_exit(EXIT_REASON_CR_ACCESS, 0, regs));
	EXPECT_EQ(entry_event(), kInjectGP & ~(1u << 11)) << "#GP, no error code in real mode";
	EXPECT_FALSE(vmcs(GUEST_CR0) & X86_CR0_PE);
	EXPECT_FALSE(vmcs(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE);
}

TEST_F(InitSipi, WithoutWaitForSipiTheInitIsIgnoredAndReported)
{
	cpu().msrs[MSR_IA32_VMX_MISC] &= ~(uint64_t)VMX_MISC_WAIT_FOR_SIPI;
	hv.caps.misc &= ~(uint64_t)VMX_MISC_WAIT_FOR_SIPI;
	init();
	EXPECT_EQ(vmcs(GUEST_ACTIVITY_STATE), 0u);
	EXPECT_EQ(vmcs(GUEST_RIP), 0x1000u);
	EXPECT_EQ(vmcs(GUEST_IA32_EFER), kEferKernel);
	EXPECT_EQ(regs.rax, 1u);
}

}  // namespace
}  // namespace vtice::fake
