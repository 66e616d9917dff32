// Holding the guest's interrupts and NMIs off for a TF single step
// (core/events.c). Expected values follow the SDM: the VM-exit
// interruption information of an acknowledged external interrupt (Vol. 3C
// 28.2.2, Table 25-17 in newer editions), the injection format (24.8.3)
// and the order the local APIC's EOI retires in-service vectors (highest
// first, Vol. 3A 11.8.5).
#include "hv_fixture.hpp"

namespace vtice::fake {
namespace {

constexpr uint32_t kValid = 1u << 31;
constexpr uint32_t kTypeExternal = 0u << 8, kTypeNmi = 2u << 8;

class Events : public HvFixture {
protected:
	vt_guest_regs regs{};

	void SetUp() override
	{
		HvFixture::SetUp();
		virtualize();
		guest_kernel_mode();
		cpu().vmcs[GUEST_RFLAGS] = 0x202;
	}

	uint64_t control(uint32_t field) { return cpu().vmcs[field]; }

	void interrupt_arrives(uint8_t vector)
	{
		cpu().vmcs[VM_EXIT_INTR_INFO] = vector | kTypeExternal | kValid;
		ASSERT_TRUE(vm_exit(EXIT_REASON_EXTERNAL_INTERRUPT, 0, regs));
	}

	bool window_requested() { return control(CPU_BASED_VM_EXEC_CONTROL) & CPU_BASED_INTR_WINDOW_EXITING; }
};

TEST_F(Events, HoldingMakesInterruptsExitAcknowledged)
{
	ASSERT_EQ(vt_hold_events(&vcpu, true), 0);
	EXPECT_TRUE(control(PIN_BASED_VM_EXEC_CONTROL) & PIN_BASED_EXT_INTR_MASK);
	EXPECT_TRUE(control(VM_EXIT_CONTROLS) & VM_EXIT_ACK_INTR_ON_EXIT);
	ASSERT_EQ(vt_hold_events(&vcpu, false), 0);
	EXPECT_FALSE(control(PIN_BASED_VM_EXEC_CONTROL) & PIN_BASED_EXT_INTR_MASK);
	EXPECT_FALSE(control(VM_EXIT_CONTROLS) & VM_EXIT_ACK_INTR_ON_EXIT);
}

TEST_F(Events, HeldInterruptsWaitThenComeHighestVectorFirst)
{
	ASSERT_EQ(vt_hold_events(&vcpu, true), 0);
	interrupt_arrives(0x31);
	interrupt_arrives(0xec);
	EXPECT_EQ(entry_event(), 0u) << "nothing is delivered while held";
	EXPECT_FALSE(window_requested());
	ASSERT_EQ(vt_hold_events(&vcpu, false), 0);
	EXPECT_TRUE(window_requested()) << "released: wait until the guest can take one";
	ASSERT_TRUE(vm_exit(EXIT_REASON_INTERRUPT_WINDOW, 0, regs));
	EXPECT_EQ(entry_event(), 0xecu | kTypeExternal | kValid);
	EXPECT_TRUE(window_requested()) << "one more is waiting";
	cpu().vmcs[VM_ENTRY_INTR_INFO_FIELD] = 0;	// VM entry delivered it
	ASSERT_TRUE(vm_exit(EXIT_REASON_INTERRUPT_WINDOW, 0, regs));
	EXPECT_EQ(entry_event(), 0x31u | kTypeExternal | kValid);
	EXPECT_FALSE(window_requested()) << "all delivered";
}

TEST_F(Events, AWindowDuringAHoldDeliversNothing)
{
	ASSERT_EQ(vt_hold_events(&vcpu, true), 0);
	interrupt_arrives(0x41);
	// A window exit requested before the hold began, taken inside it.
	cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] |= CPU_BASED_INTR_WINDOW_EXITING;
	ASSERT_TRUE(vm_exit(EXIT_REASON_INTERRUPT_WINDOW, 0, regs));
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_FALSE(window_requested());
	ASSERT_EQ(vt_hold_events(&vcpu, false), 0);
	EXPECT_TRUE(window_requested());
	ASSERT_TRUE(vm_exit(EXIT_REASON_INTERRUPT_WINDOW, 0, regs));
	EXPECT_EQ(entry_event(), 0x41u | kTypeExternal | kValid);
}

TEST_F(Events, NmiDuringTheHoldWaitsForTheRelease)
{
	ASSERT_EQ(vt_hold_events(&vcpu, true), 0);
	cpu().vmcs[VM_EXIT_INTR_INFO] = 2 | kTypeNmi | kValid;
	ASSERT_TRUE(vm_exit(EXIT_REASON_EXCEPTION_NMI, 0, regs));
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_TRUE(vcpu.nmi_pending);
	EXPECT_FALSE(control(CPU_BASED_VM_EXEC_CONTROL) & CPU_BASED_NMI_WINDOW_EXITING);
	ASSERT_EQ(vt_hold_events(&vcpu, false), 0);
	EXPECT_TRUE(control(CPU_BASED_VM_EXEC_CONTROL) & CPU_BASED_NMI_WINDOW_EXITING);
	ASSERT_TRUE(vm_exit(EXIT_REASON_NMI_WINDOW, 0, regs));
	EXPECT_EQ(entry_event(), 2u | kTypeNmi | kValid);
}

TEST_F(Events, WithoutTheAcknowledgementNothingIsHeld)
{
	hv.caps.exit &= ~(uint64_t(VM_EXIT_ACK_INTR_ON_EXIT) << 32);
	EXPECT_EQ(vt_hold_events(&vcpu, true), -VT_EOPNOTSUPP);
	EXPECT_FALSE(control(PIN_BASED_VM_EXEC_CONTROL) & PIN_BASED_EXT_INTR_MASK)
		<< "interrupt exiting alone would exit forever on a pending interrupt";
}

// A tracer gates events: they exit and wait as held ones do, no window lets
// them in, and the tracer delivers them itself (vt_deliver_held_event).
TEST_F(Events, GatedInterruptsWaitForTheTracerAndTheWindowsOpenAfter)
{
	ASSERT_EQ(vt_gate_events(&vcpu, true), 0);
	EXPECT_TRUE(control(PIN_BASED_VM_EXEC_CONTROL) & PIN_BASED_EXT_INTR_MASK);
	ASSERT_EQ(vt_hold_events(&vcpu, true), 0);
	ASSERT_EQ(vt_hold_events(&vcpu, false), 0);
	EXPECT_TRUE(control(PIN_BASED_VM_EXEC_CONTROL) & PIN_BASED_EXT_INTR_MASK) << "still gated";
	interrupt_arrives(0xec);
	EXPECT_FALSE(window_requested()) << "no window while gated";
	ASSERT_TRUE(vm_exit(EXIT_REASON_INTERRUPT_WINDOW, 0, regs));
	EXPECT_EQ(entry_event(), 0u) << "a window exit that came anyway delivers nothing";
	ASSERT_EQ(vt_gate_events(&vcpu, false), 0);
	EXPECT_FALSE(control(PIN_BASED_VM_EXEC_CONTROL) & PIN_BASED_EXT_INTR_MASK);
	EXPECT_TRUE(window_requested()) << "what waits goes in once the gate opens";
}

TEST_F(Events, GatedEventsAreQueuedWhenTheGuestCanTakeThem)
{
	ASSERT_EQ(vt_gate_events(&vcpu, true), 0);
	ASSERT_EQ(vt_hold_events(&vcpu, true), 0);
	interrupt_arrives(0x31);
	interrupt_arrives(0xec);
	EXPECT_FALSE(vt_deliver_held_event(&vcpu)) << "not into a TF step";
	ASSERT_EQ(vt_hold_events(&vcpu, false), 0);
	cpu().vmcs[GUEST_RFLAGS] = 0x2;	// IF = 0
	EXPECT_FALSE(vt_deliver_held_event(&vcpu));
	cpu().vmcs[GUEST_RFLAGS] = 0x202;
	cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] = GUEST_INTR_STATE_STI;
	EXPECT_FALSE(vt_deliver_held_event(&vcpu)) << "entry would refuse it under STI blocking";
	cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] = 0;
	ASSERT_TRUE(vt_deliver_held_event(&vcpu));
	EXPECT_EQ(entry_event(), 0xecu | kTypeExternal | kValid) << "highest first";
	EXPECT_FALSE(vt_deliver_held_event(&vcpu)) << "one event per entry";
}

TEST_F(Events, AGatedNmiGoesFirstAndAHaltedCpuWakes)
{
	ASSERT_EQ(vt_gate_events(&vcpu, true), 0);
	interrupt_arrives(0xec);
	cpu().vmcs[VM_EXIT_INTR_INFO] = 2 | kTypeNmi | kValid;
	ASSERT_TRUE(vm_exit(EXIT_REASON_EXCEPTION_NMI, 0, regs));
	EXPECT_FALSE(control(CPU_BASED_VM_EXEC_CONTROL) & CPU_BASED_NMI_WINDOW_EXITING);
	cpu().vmcs[GUEST_ACTIVITY_STATE] = GUEST_ACTIVITY_HLT;
	ASSERT_TRUE(vt_deliver_held_event(&vcpu));
	EXPECT_EQ(entry_event(), 2u | kTypeNmi | kValid);
	EXPECT_FALSE(vcpu.nmi_pending);
	EXPECT_EQ(cpu().vmcs[GUEST_ACTIVITY_STATE], GUEST_ACTIVITY_ACTIVE);
}

// The SDM has an open window's exit come right after VM entry, waking a
// halted CPU (Vol. 3C 26.6.5); the event goes in at that entry instead,
// for a CPU (Bochs 3.0) that would sleep on until another interrupt.
TEST_F(Events, WhatWaitsWhenTheGateOpensWakesAHaltedCpu)
{
	ASSERT_EQ(vt_gate_events(&vcpu, true), 0);
	cpu().vmcs[GUEST_ACTIVITY_STATE] = GUEST_ACTIVITY_HLT;
	interrupt_arrives(0xec);
	EXPECT_EQ(entry_event(), 0u) << "gated: it waits, and so does the halted CPU";
	EXPECT_EQ(cpu().vmcs[GUEST_ACTIVITY_STATE], GUEST_ACTIVITY_HLT);
	ASSERT_EQ(vt_gate_events(&vcpu, false), 0);
	interrupt_arrives(0x31);	// the next exit from HLT, the gate open
	EXPECT_EQ(entry_event(), 0xecu | kTypeExternal | kValid) << "highest first, at this entry";
	EXPECT_EQ(cpu().vmcs[GUEST_ACTIVITY_STATE], GUEST_ACTIVITY_ACTIVE);
	EXPECT_TRUE(window_requested()) << "0x31 waits for the next window";
}

TEST_F(Events, ARunningCpuWaitsForTheWindowExit)
{
	ASSERT_EQ(vt_gate_events(&vcpu, true), 0);
	interrupt_arrives(0xec);
	ASSERT_EQ(vt_gate_events(&vcpu, false), 0);
	interrupt_arrives(0x31);
	EXPECT_EQ(entry_event(), 0u) << "the window's exit delivers it, where the guest's instructions allow";
	EXPECT_TRUE(window_requested());
}

}  // namespace
}  // namespace vtice::fake
