// Z1 and the virtualized debug registers (hypervisor/debug/dr.c). DR7's
// layout is the SDM's (Vol. 3B 18.2.4): L<n> bit 2n, G<n> bit 2n+1, bit 10
// reads as 1, R/W<n> and LEN<n> in bits 16+4n..19+4n. MOV-DR exit
// qualification: SDM Vol. 3C 28.2.1 (register in 2:0, bit 4 = MOV from DR,
// GPR in 11:8).
#include "hooks_fixture.hpp"

using namespace vtice::fake;

namespace {

constexpr uint64_t kOurBp = 0xffffffff81234560ull;
constexpr uint64_t kRax = 0, kRcx = 1, kRdx = 2;

uint64_t mov_from_dr(uint64_t dr, uint64_t gpr) { return dr | (1u << 4) | (gpr << 8); }
uint64_t mov_to_dr(uint64_t dr, uint64_t gpr) { return dr | (gpr << 8); }

class DebugRegs : public HooksFixture {
protected:
	// The kernel's own hw_breakpoint: DR0 = a 4-byte write watch, enabled L0.
	const uint64_t guest_dr0 = 0xffff888004000040ull;
	const uint64_t guest_dr7 = 0x400 | 0x1 | (0xdull << 16);	// L0, R/W0=01 LEN0=11

	void SetUp() override
	{
		HooksFixture::SetUp();
		start();
		auto &c = cpu();
		c.dr[0] = guest_dr0;
		c.dr[1] = 0x1111;
		c.dr[2] = 0x2222;
		c.dr[3] = 0x3333;
		c.dr6 = 0xffff0ff0;
		c.vmcs[GUEST_DR7] = guest_dr7;
		c.vmcs[VM_EXIT_INSTRUCTION_LEN] = 3;
	}

	vt_hook_result mov_dr(uint64_t qual)
	{
		exit.qual = qual;
		return vt_hooks_on_dr_access(&vcpu, &exit);
	}

	uint64_t guest_reads(uint64_t dr)
	{
		regs.rdx = 0xdead;
		EXPECT_EQ(mov_dr(mov_from_dr(dr, kRdx)), VT_HOOK_HANDLED);
		return regs.rdx;
	}

	void guest_writes(uint64_t dr, uint64_t v)
	{
		regs.rcx = v;
		EXPECT_EQ(mov_dr(mov_to_dr(dr, kRcx)), VT_HOOK_HANDLED);
	}

	void own()
	{
		ASSERT_EQ(vt_hwbp_insert(kOurBp), 0);
		vt_hooks_on_resume(&vcpu);
	}

	uint64_t proc() { return cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL]; }
};

TEST_F(DebugRegs, OwnershipLoadsOurSlotAndMovesTheGuestsBreakpoint)
{
	own();
	auto &c = cpu();
	EXPECT_EQ(c.dr[0], kOurBp);
	EXPECT_EQ(c.dr[1], guest_dr0) << "the kernel's breakpoint moved to a free slot";
	// G0 (ours, execute), L1 with the guest's R/W0/LEN0 now in R/W1/LEN1.
	EXPECT_EQ(c.vmcs[GUEST_DR7], 0x400u | (1u << 1) | (1u << 2) | (0xdull << 20));
	EXPECT_TRUE(proc() & CPU_BASED_MOV_DR_EXITING);
	EXPECT_TRUE(c.vmcs[EXCEPTION_BITMAP] & (1u << 1));
}

TEST_F(DebugRegs, GuestReadsBackItsOwnValues)
{
	own();
	cpu().vmcs[GUEST_RIP] = 0x1000;
	EXPECT_EQ(guest_reads(0), guest_dr0);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1003u) << "the MOV is emulated and skipped";
	EXPECT_EQ(guest_reads(1), 0x1111u);
	EXPECT_EQ(guest_reads(3), 0x3333u);
	EXPECT_EQ(guest_reads(6), 0xffff0ff0u);
	EXPECT_EQ(guest_reads(7), guest_dr7);
	regs.rax = 0;
	EXPECT_EQ(mov_dr(mov_from_dr(0, kRax)), VT_HOOK_HANDLED);
	EXPECT_EQ(regs.rax, guest_dr0);
}

TEST_F(DebugRegs, GuestWritesLandInItsShadowsAndFreeSlots)
{
	own();
	guest_writes(2, 0xffff888005000000ull);
	guest_writes(7, 0x400 | (1u << 5) | (0x1ull << 24));	// G2 only, R/W2=01 LEN2=00
	EXPECT_EQ(guest_reads(7), 0x400u | (1u << 5) | (0x1ull << 24));
	EXPECT_EQ(guest_reads(2), 0xffff888005000000ull);
	auto &c = cpu();
	EXPECT_EQ(c.dr[0], kOurBp) << "our slot untouched";
	EXPECT_EQ(c.dr[1], 0xffff888005000000ull) << "guest's DR2 in the first free slot";
	EXPECT_EQ(c.vmcs[GUEST_DR7], 0x400u | (1u << 1) | (1u << 3) | (0x1ull << 20));
	// DR6: only its defined bits are writable (SDM 3B 18.2.3).
	guest_writes(6, 0);
	EXPECT_EQ(guest_reads(6), 0xfffe07f0u);
}

TEST_F(DebugRegs, DebugExceptionsRoutedBySlot)
{
	own();
	cpu().vmcs[GUEST_RFLAGS] = 0x202;
	EXPECT_EQ(vt_hooks_on_debug(&vcpu, &exit, 1u << 0, &stop), VT_HOOK_STOP);
	EXPECT_EQ(stop.reason, VT_STOP_HWBREAK);
	EXPECT_TRUE(cpu().vmcs[GUEST_RFLAGS] & (1u << 16)) << "RF: the faulting insn can resume";

	// The kernel's breakpoint fired in physical slot 1: it sees B0, its slot.
	EXPECT_EQ(vt_hooks_on_debug(&vcpu, &exit, 1u << 1, &stop), VT_HOOK_NOT_MINE);
	EXPECT_EQ(guest_reads(6) & 0xf, 1u);
	// A single step is the guest's too, with BS (bit 14) and no B bits.
	EXPECT_EQ(vt_hooks_on_debug(&vcpu, &exit, 1u << 14, &stop), VT_HOOK_NOT_MINE);
	EXPECT_EQ(guest_reads(6) & 0x400f, 0x4000u);
}

TEST_F(DebugRegs, UnownedDebugExceptionsReachTheHardwareDr6)
{
	// No Z1: DR6 is the guest's own register, which the #DB exit did not write.
	EXPECT_EQ(vt_hooks_on_debug(&vcpu, &exit, (1u << 2) | (1u << 14), &stop),
		  VT_HOOK_NOT_MINE);
	EXPECT_EQ(cpu().dr6, 0xffff0ff0u | (1u << 2) | (1u << 14));
	EXPECT_FALSE(proc() & CPU_BASED_MOV_DR_EXITING);
}

TEST_F(DebugRegs, RemovingTheLastGivesEverythingBack)
{
	own();
	guest_writes(3, 0x4444);
	guest_writes(7, guest_dr7 | (1u << 6));	// also L3
	ASSERT_EQ(vt_hwbp_remove(kOurBp), 0);
	vt_hooks_on_resume(&vcpu);
	auto &c = cpu();
	EXPECT_EQ(c.dr[0], guest_dr0);
	EXPECT_EQ(c.dr[1], 0x1111u);
	EXPECT_EQ(c.dr[2], 0x2222u);
	EXPECT_EQ(c.dr[3], 0x4444u) << "what the guest wrote while we owned it";
	EXPECT_EQ(c.vmcs[GUEST_DR7], guest_dr7 | (1u << 6));
	EXPECT_FALSE(proc() & CPU_BASED_MOV_DR_EXITING);
	EXPECT_FALSE(c.vmcs[EXCEPTION_BITMAP] & (1u << 1));
}

TEST_F(DebugRegs, RemoveAllGivesEverythingBack)
{
	own();
	ASSERT_EQ(vt_hwbp_insert(kOurBp + 16), 0);
	vt_hooks_remove_all();
	vt_hooks_on_resume(&vcpu);
	EXPECT_EQ(cpu().dr[0], guest_dr0);
	EXPECT_EQ(cpu().vmcs[GUEST_DR7], guest_dr7);
	EXPECT_FALSE(proc() & CPU_BASED_MOV_DR_EXITING);
}

TEST_F(DebugRegs, FourSlotsAtMost)
{
	for (uint64_t i = 0; i < 4; i++)
		ASSERT_EQ(vt_hwbp_insert(kOurBp + i), 0);
	EXPECT_EQ(vt_hwbp_insert(kOurBp + 4), -VT_ENOSPC);
	EXPECT_EQ(vt_hwbp_insert(kOurBp + 2), 0) << "idempotent";
	vt_hooks_on_resume(&vcpu);
	EXPECT_EQ(cpu().vmcs[GUEST_DR7], 0x400u | 0xaa) << "G0-G3; the guest's L0 found no slot";
	EXPECT_EQ(guest_reads(0), guest_dr0) << "but the guest still sees its own value";
}

TEST_F(DebugRegs, FaultsTheMovWouldHaveRaised)
{
	own();
	cpu().vmcs[GUEST_RIP] = 0x1000;
	// CR4.DE=1: DR4/DR5 are #UD (the exit has priority over it, SDM 3C 25.1.3).
	cpu().vmcs[GUEST_CR4] |= 1u << 3;
	EXPECT_EQ(mov_dr(mov_from_dr(4, kRax)), VT_HOOK_HANDLED);
	EXPECT_EQ(entry_event(), kInjectUD);
	cpu().vmcs[VM_ENTRY_INTR_INFO_FIELD] = 0;
	cpu().vmcs[GUEST_CR4] &= ~(1ull << 3);
	EXPECT_EQ(guest_reads(5), guest_dr7) << "DR5 aliases DR7 without CR4.DE";
	// Bits 63:32 of DR6/DR7 must be 0.
	regs.rcx = 1ull << 40;
	EXPECT_EQ(mov_dr(mov_to_dr(7, kRcx)), VT_HOOK_HANDLED);
	EXPECT_EQ(entry_event(), kInjectGP);
	cpu().vmcs[VM_ENTRY_INTR_INFO_FIELD] = 0;
	// CPL 3: #GP(0), nothing read.
	guest_user_mode();
	regs.rax = 7;
	EXPECT_EQ(mov_dr(mov_from_dr(0, kRax)), VT_HOOK_HANDLED);
	EXPECT_EQ(entry_event(), kInjectGP);
	EXPECT_EQ(regs.rax, 7u);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1000u) << "faults do not advance RIP";
}

TEST_F(DebugRegs, GeneralDetectIsEmulated)
{
	own();
	guest_writes(7, guest_dr7 | (1u << 13));
	EXPECT_EQ(mov_dr(mov_from_dr(0, kRax)), VT_HOOK_HANDLED);
	// #DB: vector 1, hardware exception (type 3), valid (SDM 3C 24.8.3).
	EXPECT_EQ(entry_event(), 1u | (3u << 8) | (1u << 31));
	cpu().vmcs[VM_ENTRY_INTR_INFO_FIELD] = 0;
	EXPECT_TRUE(guest_reads(6) & (1u << 13)) << "DR6.BD";
	EXPECT_FALSE(guest_reads(7) & (1u << 13)) << "GD cleared on entry to the handler";
}

bool dr_access_cb(vt_vcpu *v, vt_exit *e)
{
	return vt_hooks_on_dr_access(v, e) == VT_HOOK_HANDLED;
}

TEST_F(DebugRegs, TheCoreDispatchesMovDrExits)
{
	own();
	vt_callbacks cb{};
	cb.dr_access = dr_access_cb;
	vt_hv_set_callbacks(&hv, &cb);
	vt_guest_regs r{};
	EXPECT_TRUE(vm_exit(EXIT_REASON_DR_ACCESS, mov_from_dr(0, kRcx), r));
	EXPECT_EQ(r.rcx, guest_dr0);
	vt_hv_set_callbacks(&hv, nullptr);
	EXPECT_FALSE(vm_exit(EXIT_REASON_DR_ACCESS, mov_from_dr(0, kRcx), r))
		<< "nobody to emulate against: the CPU leaves VMX";
}

// An INIT while the stub holds the debug registers: the guest's shadows take
// the INIT values of SDM Vol. 3A Table 10-1 (DR0-DR3 0, DR6 FFFF0FF0H, DR7
// 400H), as the bare CPU's registers would, and the debugger's slot stays.
TEST_F(DebugRegs, AnInitResetsTheGuestsShadowsAndKeepsOurSlot)
{
	own();
	guest_writes(6, 0xffff4ff1);	// BS and B0 left over from a #DB
	vt_callbacks cb{};
	cb.dr_access = dr_access_cb;
	cb.init_debug_registers = vt_hooks_on_init_signal;
	vt_hv_set_callbacks(&hv, &cb);
	hv.caps.misc |= VMX_MISC_WAIT_FOR_SIPI;
	vt_guest_regs r{};
	ASSERT_TRUE(vm_exit(EXIT_REASON_INIT_SIGNAL, 0, r));
	guest_kernel_mode();	// the guest's next MOV DR (CPL 0 in real mode too)
	for (uint64_t n = 0; n < 4; n++)
		EXPECT_EQ(guest_reads(n), 0u) << "DR" << n;
	EXPECT_EQ(guest_reads(6), 0xffff0ff0u);
	EXPECT_EQ(guest_reads(7), 0x400u);
	auto &c = cpu();
	EXPECT_EQ(c.dr[0], kOurBp) << "the debugger's breakpoint survives the guest's INIT";
	EXPECT_EQ(c.vmcs[GUEST_DR7], 0x400u | (1u << 1)) << "G0 only: the kernel's L0 went with the INIT";
	vt_hv_set_callbacks(&hv, nullptr);
}

TEST_F(DebugRegs, WithoutOwnershipTheCoreResetsTheRegistersItself)
{
	EXPECT_FALSE(vt_hooks_on_init_signal(&vcpu));
	EXPECT_EQ(cpu().dr[0], guest_dr0) << "nothing written when the registers are the guest's";
}

}  // namespace
