// VMCALL authentication and functions (include/uapi/vtice/vmcall.h).
#include "hv_fixture.hpp"

extern "C" {
#include <vtice/vmcall.h>
}

using namespace vtice::fake;

class Vmcall : public HvFixture {
protected:
	void SetUp() override
	{
		HvFixture::SetUp();
		virtualize();
		guest_kernel_mode();
		cpu().vmcs[VM_EXIT_INSTRUCTION_LEN] = 3;
	}

	vt_guest_regs call(uint64_t func, uint64_t key, uint64_t a1 = 0, uint64_t a2 = 0)
	{
		vt_guest_regs r{};
		r.rax = func;
		r.rcx = key;
		r.rdx = a1;
		r.r8 = a2;
		r.rbx = 0xb0b0;
		EXPECT_TRUE(vm_exit(EXIT_REASON_VMCALL, 0, r));
		return r;
	}

	// #UD and nothing else: registers, RIP, ring untouched.
	void expect_refused(const vt_guest_regs &r, uint64_t func, uint64_t key, uint64_t arg = 0)
	{
		EXPECT_EQ(entry_event(), kInjectUD);
		EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1000u);
		EXPECT_EQ(r.rax, func);
		EXPECT_EQ(r.rcx, key);
		EXPECT_EQ(r.rdx, arg);
		EXPECT_EQ(vcpu.ring.hdr->head, 0u);
		EXPECT_TRUE(cpu().in_vmx);
	}
};

TEST_F(Vmcall, KernelWithKeyIsHonoured)
{
	vt_guest_regs r = call(VTICE_VMCALL_PING, hv.key);
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_EQ(r.rax, (uint64_t)VTICE_VMCALL_OK);
	EXPECT_EQ(r.rdx, VTICE_VMCALL_PONG);
	EXPECT_EQ(r.rbx, 0xb0b0u);
	EXPECT_EQ(r.rcx, 0u) << "the key does not stay in a register the kernel may push onto a stack";
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1003u);
}

TEST_F(Vmcall, KeyComesFromTheOsRandomSource)
{
	EXPECT_EQ(hv.key, cpu().random);
	EXPECT_NE(hv.key, 0u);
}

TEST_F(Vmcall, UserModeGetsUd)
{
	guest_user_mode();
	vt_guest_regs r = call(VTICE_VMCALL_EMIT_TEST, hv.key, 5);
	expect_refused(r, VTICE_VMCALL_EMIT_TEST, hv.key, 5);
}

TEST_F(Vmcall, WrongKeyGetsUd)
{
	for (uint64_t key : {0ull, hv.key ^ 1, ~hv.key}) {
		vt_guest_regs r = call(VTICE_VMCALL_DEVIRTUALIZE, key);
		expect_refused(r, VTICE_VMCALL_DEVIRTUALIZE, key);
	}
}

TEST_F(Vmcall, CompatibilityModeGetsUd)
{
	cpu().vmcs[GUEST_CS_AR_BYTES] = 0xc09b;	// CS.L = 0: 32-bit code at CPL 0
	vt_guest_regs r = call(VTICE_VMCALL_PING, hv.key);
	expect_refused(r, VTICE_VMCALL_PING, hv.key);
}

TEST_F(Vmcall, UnknownFunction)
{
	vt_guest_regs r = call(0x77, hv.key);
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_EQ((int64_t)r.rax, VTICE_VMCALL_ENOSYS);
}

// stealth=1's last step: the call on every CPU seals, and after it the
// right key opens nothing (a CPU without VMX: #UD).
TEST_F(Vmcall, StealthSealsOnTheLastCpuAndThenTheKeyGetsUd)
{
	vt_guest_regs r = call(VTICE_VMCALL_STEALTH, hv.key, 0);
	EXPECT_EQ((int64_t)r.rax, VTICE_VMCALL_EINVAL) << "no CPU count";
	EXPECT_EQ(hv.stealth_stage, 0u) << "a refused call changes nothing";

	r = call(VTICE_VMCALL_STEALTH, hv.key, 2);
	EXPECT_EQ(r.rax, (uint64_t)VTICE_VMCALL_OK);
	EXPECT_EQ(r.rdx, 0u) << "one of two CPUs: not sealed yet";
	EXPECT_EQ(hv.stealth_stage, 2u) << "the copies are retired by the first call";
	r = call(VTICE_VMCALL_PING, hv.key);
	EXPECT_EQ(r.rdx, VTICE_VMCALL_PONG) << "the second CPU can still make its call";

	r = call(VTICE_VMCALL_STEALTH, hv.key, 2);
	EXPECT_EQ(r.rax, (uint64_t)VTICE_VMCALL_OK);
	EXPECT_EQ(r.rdx, 1u) << "the last CPU seals";
	EXPECT_TRUE(hv.sealed);
	for (uint64_t func : {VTICE_VMCALL_PING, VTICE_VMCALL_DEVIRTUALIZE, VTICE_VMCALL_STEALTH}) {
		cpu().vmcs[GUEST_RIP] = 0x1000;
		r = call(func, hv.key);
		expect_refused(r, func, hv.key);
	}
}

// Both VMCALLs that flush the EPT use a type the CPU has: single-context
// where offered, else all-context (an unsupported type would fail, SDM 3C
// 31.3, and leave stale views behind).
TEST_F(Vmcall, InveptUsesATypeTheCpuHas)
{
	for (bool single : {true, false}) {
		if (!single)
			hv.caps.flags &= ~VTICE_CAP_INVEPT_SINGLE;
		cpu().invepts.clear();
		call(VTICE_VMCALL_INVEPT, hv.key);
		call(VTICE_VMCALL_STEALTH, hv.key, 2);
		ASSERT_EQ(cpu().invepts.size(), 2u);
		for (const auto &[type, eptp] : cpu().invepts) {
			EXPECT_EQ(type, single ? (uint64_t)VMX_EPT_EXTENT_CONTEXT
					      : (uint64_t)VMX_EPT_EXTENT_GLOBAL);
			EXPECT_EQ(eptp, single ? hv.ept.eptp : 0u);
		}
	}
}

TEST_F(Vmcall, EmitTestRecords)
{
	vt_guest_regs r = call(VTICE_VMCALL_EMIT_TEST, hv.key, 10, 0xabc);
	EXPECT_EQ(r.rax, (uint64_t)VTICE_VMCALL_OK);
	EXPECT_EQ(r.rdx, 10u);
	ASSERT_EQ(vcpu.ring.hdr->head, 10u);
	for (uint64_t i = 0; i < 10; i++) {
		const vtice_record &rec = vcpu.ring.records[i];
		EXPECT_EQ(rec.type, VTICE_REC_TEST);
		EXPECT_EQ(rec.u.test.sequence, i);
		EXPECT_EQ(rec.u.test.value, 0xabcu);
	}
	EXPECT_LT(vcpu.ring.records[0].tsc, vcpu.ring.records[9].tsc);
}

TEST_F(Vmcall, EmitTestOverflowIsCounted)
{
	vt_guest_regs r = call(VTICE_VMCALL_EMIT_TEST, hv.key, 100, 1);	// ring of 64
	EXPECT_EQ(r.rdx, 64u - VT_RING_RESERVE) << "the ring's reserve stays free (core/ring.h)";
	EXPECT_EQ(vcpu.ring.hdr->lost, 36u + VT_RING_RESERVE);
	r = call(VTICE_VMCALL_EMIT_TEST, hv.key, 0, 1);
	EXPECT_EQ((int64_t)r.rax, VTICE_VMCALL_EINVAL);
}

TEST_F(Vmcall, DevirtualizeRestoresTheKernelState)
{
	auto &c = cpu();
	// What the guest (the kernel) had when it asked to leave.
	c.vmcs[GUEST_GDTR_BASE] = 0xfffffe0000001000ull;
	c.vmcs[GUEST_GDTR_LIMIT] = 0x7f;
	c.vmcs[GUEST_IDTR_BASE] = 0xfffffe0000000000ull;
	c.vmcs[GUEST_IDTR_LIMIT] = 0xfff;
	c.vmcs[GUEST_CR3] = 0x7654000;
	c.vmcs[GUEST_DR7] = 0x401;
	c.vmcs[GUEST_FS_BASE] = 0x7f0000001000ull;
	c.vmcs[GUEST_GS_BASE] = 0xffff88807fc00000ull;
	c.vmcs[GUEST_RSP] = 0xffffc90000123450ull;
	c.vmcs[GUEST_RFLAGS] = 0x46;
	uint64_t cr4 = c.vmcs[GUEST_CR4];
	vcpu.debugctl_shadow = DEBUGCTLMSR_LBR;

	vt_guest_regs r{};
	r.rax = VTICE_VMCALL_DEVIRTUALIZE;
	r.rcx = hv.key;
	EXPECT_FALSE(vm_exit(EXIT_REASON_VMCALL, 0, r)) << "leaves VMX instead of VMRESUME";
	EXPECT_FALSE(c.in_vmx);
	EXPECT_EQ(r.rax, 0u);
	EXPECT_EQ(r.rip, 0x1003u) << "continues after the VMCALL";
	EXPECT_EQ(r.rsp, 0xffffc90000123450ull);
	EXPECT_EQ(r.rflags, 0x46u);
	// VM exit left limits at 0xFFFF, DR7 0x400, DEBUGCTL 0, our CR3 (SDM 3C 28.5)
	EXPECT_EQ(c.gdt.limit, 0x7f);
	EXPECT_EQ(c.gdt.base, 0xfffffe0000001000ull);
	EXPECT_EQ(c.idt.limit, 0xfff);
	EXPECT_EQ(c.cr3, 0x7654000u);
	EXPECT_EQ(c.cr4, cr4 & ~X86_CR4_VMXE);
	// host-mode TLB entries flushed: CR4.PGE toggled after VMXOFF
	ASSERT_GE(c.cr4_writes.size(), 2u);
	EXPECT_EQ(c.cr4_writes[c.cr4_writes.size() - 2], (cr4 & ~X86_CR4_VMXE) ^ X86_CR4_PGE);
	EXPECT_EQ(c.dr7, 0x401u);
	EXPECT_EQ(c.msrs[MSR_IA32_DEBUGCTLMSR], DEBUGCTLMSR_LBR);
	EXPECT_EQ(c.msrs[MSR_FS_BASE], 0x7f0000001000ull);
	EXPECT_EQ(c.msrs[MSR_GS_BASE], 0xffff88807fc00000ull);
	// VMCLEAR before VMXOFF so the VMCS memory can be freed
	auto vmclear = std::find(c.trace.begin(), c.trace.end(), "vmclear");
	auto vmxoff = std::find(c.trace.begin(), c.trace.end(), "vmxoff");
	EXPECT_LT(vmclear, vmxoff);
}

TEST_F(Vmcall, DevirtualizeThroughTheGuestSide)
{
	ASSERT_EQ(vt_vcpu_devirtualize(&vcpu), 0);
	EXPECT_FALSE(cpu().in_vmx);
	EXPECT_FALSE(vcpu.launched);
	EXPECT_EQ(cpu().reload_tr_calls, 1) << "TR limit is 0x67 after a VM exit";
	EXPECT_EQ(vt_vcpu_devirtualize(&vcpu), 0) << "idempotent";
	EXPECT_EQ(cpu().count("vmcall"), 1u);
}

namespace {
bool user_vmcall(vt_vcpu *, vt_exit *exit, u64 func)
{
	exit->regs->rax = 0;
	exit->regs->rdx = func * 2;
	vt_advance_rip(exit);
	return true;
}
const vt_callbacks kUser = {nullptr, nullptr, nullptr, user_vmcall, nullptr};
}  // namespace

TEST_F(Vmcall, UserFunctionsGoToTheDebugger)
{
	vt_hv_set_callbacks(&hv, &kUser);
	vt_guest_regs r = call(VTICE_VMCALL_USER_BASE + 1, hv.key);
	EXPECT_EQ(r.rdx, 2u * (VTICE_VMCALL_USER_BASE + 1));
	EXPECT_EQ(r.rcx, 0u) << "nor after the debugger's functions";
	guest_user_mode();
	r = call(VTICE_VMCALL_USER_BASE + 1, hv.key);
	EXPECT_EQ(entry_event(), kInjectUD) << "the callback never sees unauthenticated calls";
}

// Nested under a parent hypervisor (KVM here): the kernel's own paravirtual
// VMCALLs go up to it with its registers, and its answer comes back
// (core/parent.c, issue 21). KVM's ABI: nr in RAX, arguments in RBX, RCX,
// RDX, RSI, the result in RAX (Documentation/virt/kvm/x86/hypercalls.rst).
class NestedVmcall : public Vmcall {
protected:
	static constexpr uint64_t kKvmHcSendIpi = 10;

	void SetUp() override
	{
		HvFixture::SetUp();
		cpu().cpuid[{1, 0}].ecx |= 1u << 31;	// the hypervisor-present bit, as under KVM
		cpu().cpuid[{0x40000000, 0}] = {0x40000001, 0x4b4d564b, 0x564b4d56, 0x4d};	// "KVMKVMKVM"
		cpu().parent = [](vt_guest_regs &r) {
			r.rax = r.rax == kKvmHcSendIpi ? 2 : (uint64_t)-1000;	// IPIs sent / -KVM_ENOSYS
			r.rbx = 0;
		};
		virtualize();
		guest_kernel_mode();
		cpu().vmcs[VM_EXIT_INSTRUCTION_LEN] = 3;
	}

	vt_guest_regs kvm_hypercall(uint64_t nr)
	{
		vt_guest_regs r{};
		r.rax = nr;
		r.rbx = 0xf;	// the IPI bitmap's low half
		r.rcx = 0;	// its high half (also where vtice's key would be)
		r.rdx = 1;	// the lowest APIC ID
		r.rsi = 0xfd;	// the vector
		EXPECT_TRUE(vm_exit(EXIT_REASON_VMCALL, 0, r));
		return r;
	}
};

TEST_F(NestedVmcall, TheParentIsFoundAtLoad)
{
	EXPECT_EQ(hv.parent, VT_PARENT_KVM);
}

TEST_F(NestedVmcall, AKernelVmcallWithoutTheKeyGoesToTheParent)
{
	vt_guest_regs r = kvm_hypercall(kKvmHcSendIpi);
	EXPECT_EQ(entry_event(), 0u) << "no #UD";
	EXPECT_EQ(r.rax, 2u) << "the parent's answer";
	EXPECT_EQ(r.rbx, 0u) << "registers the parent changed come back";
	EXPECT_EQ(r.rsi, 0xfdu) << "the rest stay";
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1003u);
	ASSERT_EQ(cpu().parent_calls.size(), 1u);
	const vt_guest_regs &asked = cpu().parent_calls[0];
	EXPECT_EQ(asked.rax, kKvmHcSendIpi);
	EXPECT_EQ(asked.rbx, 0xfu);
	EXPECT_EQ(asked.rdx, 1u);
	EXPECT_EQ(asked.rsi, 0xfdu);
}

TEST_F(NestedVmcall, VticesOwnVmcallsNeverReachTheParent)
{
	vt_guest_regs r = call(VTICE_VMCALL_PING, hv.key);
	EXPECT_EQ(r.rdx, VTICE_VMCALL_PONG);
	EXPECT_TRUE(cpu().parent_calls.empty());
}

// KVM answers a hypercall from CPL 3 with -KVM_EPERM and skips it
// (kvm_emulate_hypercall): under KVM that is what user mode sees without
// vtice, so it sees the same with it.
TEST_F(NestedVmcall, UserModeGetsKvmsRefusalAndNeverReachesTheParent)
{
	guest_user_mode();
	cpu().vmcs[VM_EXIT_INSTRUCTION_LEN] = 3;
	vt_guest_regs r = kvm_hypercall(kKvmHcSendIpi);
	EXPECT_EQ(entry_event(), 0u) << "no #UD under KVM";
	EXPECT_EQ(r.rax, (uint64_t)-1) << "-KVM_EPERM";
	EXPECT_EQ(r.rbx, 0xfu);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1003u);
	EXPECT_TRUE(cpu().parent_calls.empty()) << "root's CPL 0 must not lend user mode its privilege";
}

TEST_F(NestedVmcall, CompatibilityModeGetsKvmsRefusalIn32Bits)
{
	guest_user_mode();
	cpu().vmcs[GUEST_CS_AR_BYTES] = 0xc0fb;	// 32-bit user code: D set, L clear
	cpu().vmcs[VM_EXIT_INSTRUCTION_LEN] = 3;
	vt_guest_regs r = kvm_hypercall(kKvmHcSendIpi);
	EXPECT_EQ(entry_event(), 0u);
	EXPECT_EQ(r.rax, 0xffffffffu);
	EXPECT_TRUE(cpu().parent_calls.empty());
}

class NestedVmcallHyperV : public Vmcall {
protected:
	void SetUp() override
	{
		HvFixture::SetUp();
		cpu().cpuid[{1, 0}].ecx |= 1u << 31;
		cpu().cpuid[{0x40000000, 0}] = {0x40000005, 0x7263694d, 0x666f736f, 0x76482074};	// "Microsoft Hv"
		cpu().parent = [](vt_guest_regs &r) { r.rax = 0; };
		virtualize();
		guest_user_mode();
		cpu().vmcs[VM_EXIT_INSTRUCTION_LEN] = 3;
	}
};

// Hyper-V raises #UD for a hypercall from CPL 3, as a bare CPU does.
TEST_F(NestedVmcallHyperV, UserModeGetsUdAndNeverReachesTheParent)
{
	EXPECT_EQ(hv.parent, VT_PARENT_OTHER);
	vt_guest_regs r{};
	r.rax = 0x10008;
	ASSERT_TRUE(vm_exit(EXIT_REASON_VMCALL, 0, r));
	EXPECT_EQ(entry_event(), kInjectUD);
	EXPECT_EQ(r.rax, 0x10008u);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], 0x1000u);
	EXPECT_TRUE(cpu().parent_calls.empty());
}

TEST_F(NestedVmcall, CpuidShowsTheParentAsTheKernelSawItAtBoot)
{
	vt_guest_regs r{};
	r.rax = 1;
	ASSERT_TRUE(vm_exit(EXIT_REASON_CPUID, 0, r));
	EXPECT_NE(r.rcx & (1u << 31), 0u) << "the parent's hypervisor-present bit stays";
	EXPECT_NE(r.rcx & (1u << 5), 0u) << "VMX as the parent offers it";
	r = {};
	r.rax = 0x40000000;
	ASSERT_TRUE(vm_exit(EXIT_REASON_CPUID, 0, r));
	EXPECT_EQ(r.rbx, 0x4b4d564bu) << "the parent's signature, not vtice's";
}

TEST_F(Vmcall, WithoutAParentNoVmcallLeavesRoot)
{
	EXPECT_EQ(hv.parent, VT_PARENT_NONE);
	vt_guest_regs r = call(10, 0);
	expect_refused(r, 10, 0);
	EXPECT_TRUE(cpu().parent_calls.empty());
}
