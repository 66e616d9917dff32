// VMX root's own IDT and GDT (hypervisor/core/root_idt.h): every gate leads
// to root's entry stubs, never to the kernel's handlers; the host state
// names root's tables; an NMI that arrives in root reaches the guest or the
// debugger at the next VM entry, through an NMI window if it came late; a
// fault in root is fixed up only for the MSR accessors and otherwise
// reported. Gate layout: SDM Vol. 3A 6.14.1; NMI window: 3C 25.2, 26.7.6.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "hv_fixture.hpp"

extern "C" {
#include "ept.h"
#include "root_log.h"
}

using namespace vtice::fake;

namespace {

constexpr uint64_t kNmiEvent = 2 | INTR_TYPE_NMI_INTR | INTR_INFO_VALID_MASK;

// The fields of a 64-bit IDT gate, decoded from the SDM's layout.
struct Gate {
	uint64_t offset;
	uint16_t selector;
	unsigned ist, type, dpl;
	bool present;
};

Gate decode(const u64 *g)
{
	return Gate{(g[0] & 0xffff) | ((g[0] >> 48) & 0xffff) << 16 | (g[1] & 0xffffffff) << 32,
		    uint16_t(g[0] >> 16),
		    unsigned(g[0] >> 32) & 7,
		    unsigned(g[0] >> 40) & 0xf,
		    unsigned(g[0] >> 45) & 3,
		    bool(g[0] >> 47 & 1)};
}

int g_debugger_nmis;
bool g_debugger_claims;
std::function<void()> g_pre_entry;

const vt_callbacks kDebugger = {
	.nmi = [](vt_vcpu *, vt_exit *) {
		g_debugger_nmis++;
		return g_debugger_claims;
	},
	.pre_entry = [](vt_vcpu *, vt_exit *) {
		if (g_pre_entry)
			g_pre_entry();
	},
};

class RootIdt : public HvFixture {
protected:
	void SetUp() override
	{
		HvFixture::SetUp();
		seed_linux_descriptors();
		g_debugger_nmis = 0;
		g_debugger_claims = false;
		g_pre_entry = nullptr;
		virtualize();
		guest_kernel_mode();
	}

	// An RSP somewhere on this vCPU's host stack, as a root handler sees it.
	uint64_t host_rsp(uint64_t below_top = 512) const
	{
		return reinterpret_cast<uint64_t>(vcpu.stack) + VT_HOST_STACK_PAGES * 4096 - below_top;
	}

	bool nmi_window() const
	{
		return cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_NMI_WINDOW_EXITING;
	}

	void cpuid_exit()
	{
		vt_guest_regs r{};
		ASSERT_TRUE(vm_exit(EXIT_REASON_CPUID, 0, r));
	}

	std::vector<vt_root_event> root_events()
	{
		std::vector<vt_root_event> out;
		u64 seen = 0;
		vt_root_log_drain(&vcpu.counts->log, &seen,
				  [](const vt_root_event *ev, void *ctx) {
					  static_cast<std::vector<vt_root_event> *>(ctx)->push_back(*ev);
				  },
				  &out);
		return out;
	}
};

TEST_F(RootIdt, EveryGateLeadsToRootsOwnEntries)
{
	ASSERT_NE(hv.root_idt, nullptr);
	for (unsigned v = 0; v < 256; v++) {
		Gate g = decode(hv.root_idt + 2 * v);
		uint64_t want = v == 2 ? reinterpret_cast<uint64_t>(&vt_root_nmi_entry) : vt_root_vectors[v];
		EXPECT_EQ(g.offset, want) << "vector " << v;
		EXPECT_EQ(g.selector, cpu().cs) << "the kernel's code segment, vector " << v;
		EXPECT_EQ(g.type, 0xeu) << "64-bit interrupt gate: IF stays clear, vector " << v;
		EXPECT_EQ(g.ist, 0u) << "no stack switch: root stays on its host stack, vector " << v;
		EXPECT_EQ(g.dpl, 0u) << "vector " << v;
		EXPECT_TRUE(g.present) << "vector " << v;
	}
}

TEST_F(RootIdt, HostStateNamesRootsTablesNotTheKernels)
{
	auto &v = cpu().vmcs;
	EXPECT_EQ(v[HOST_IDTR_BASE], reinterpret_cast<uint64_t>(hv.root_idt));
	EXPECT_EQ(v[HOST_GDTR_BASE], reinterpret_cast<uint64_t>(vcpu.host_gdt));
	// The kernel's GDT as it was when the CPU was virtualized (seeded buffer).
	vt_desc_ptr kernel{};
	seed_linux_descriptors();
	kernel = cpu().gdt;
	EXPECT_NE(v[HOST_GDTR_BASE], kernel.base);
	EXPECT_EQ(std::memcmp(vcpu.host_gdt, reinterpret_cast<void *>(kernel.base), kernel.limit + 1), 0);
	// A VM exit now runs on root's tables (SDM 3C 28.5.2).
	cpuid_exit();
	EXPECT_EQ(cpu().idt.base, reinterpret_cast<uint64_t>(hv.root_idt));
	EXPECT_EQ(cpu().gdt.base, reinterpret_cast<uint64_t>(vcpu.host_gdt));
}

// hv and the vCPU page-allocated, as the module's: the shield copies both.
TEST(RootTables, TheGuestCannotReachThem)
{
	reset();
	seed_vmx(bochs_skylake_x);
	// 48 physical address bits: the EPT covers the heap the fake OS's pages
	// come from (virt == phys), so the shield can hide them.
	cpu().cpuid[{0x80000008, 0}] = {0x3030, 0, 0, 0};
	auto *hv = static_cast<vt_hv *>(vt_os_alloc_pages(VT_HV_PAGES));
	auto *vcpu = static_cast<vt_vcpu *>(vt_os_alloc_pages(VT_VCPU_PAGES));
	ASSERT_EQ(vt_hv_init(hv, 0), 0);
	ASSERT_EQ(vt_vcpu_alloc(hv, vcpu, 0), 0);
	ASSERT_EQ(vt_hv_shield_own_pages(hv), 0);
	ASSERT_EQ(vt_vcpu_shield(vcpu), 0);
	for (const void *page : {static_cast<const void *>(hv->root_idt), static_cast<const void *>(vcpu->host_gdt)}) {
		int level = 0;
		u64 *e = vt_ept_leaf(&hv->ept, vt_os_virt_to_phys(page), &level);
		ASSERT_NE(e, nullptr);
		EXPECT_EQ(level, VT_EPT_LEVEL_PTE);
		EXPECT_EQ(*e & VMX_EPT_ADDR_MASK, hv->shield.decoy_pa) << "the guest sees the decoy";
	}
	vt_vcpu_free(vcpu);
	vt_hv_fini(hv);
	vt_os_free_pages(vcpu, VT_VCPU_PAGES);
	vt_os_free_pages(hv, VT_HV_PAGES);
	EXPECT_EQ(live_allocations(), 0u);
}

TEST_F(RootIdt, HandlersFindTheirVcpuFromAnyHostStackAddress)
{
	for (uint64_t below : {uint64_t(16 + 8), uint64_t(512), uint64_t(4096 * 3 + 40), uint64_t(VT_HOST_STACK_PAGES) * 4096})
		EXPECT_EQ(vt_root_vcpu(host_rsp(below)), &vcpu) << below << " bytes below the top";
}

TEST_F(RootIdt, AnNmiInRootReachesTheGuestAtTheNextEntry)
{
	vt_root_nmi(host_rsp());
	EXPECT_TRUE(vcpu.root_nmi);
	EXPECT_EQ(vcpu.counts->root_nmis, 1u);
	EXPECT_TRUE(nmi_window()) << "in case the handler had looked already";
	cpuid_exit();
	EXPECT_EQ(entry_event(), kNmiEvent);
	EXPECT_FALSE(vcpu.root_nmi);
}

TEST_F(RootIdt, TheDebuggersOwnNmiInRootIsNotTheGuests)
{
	vt_hv_set_callbacks(&hv, &kDebugger);
	g_debugger_claims = true;
	vt_root_nmi(host_rsp());
	cpuid_exit();
	EXPECT_EQ(g_debugger_nmis, 1);
	EXPECT_EQ(entry_event(), 0u);
}

TEST_F(RootIdt, AnNmiInRootWaitsWhileTheGuestBlocksNmis)
{
	cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] = GUEST_INTR_STATE_NMI;
	vt_root_nmi(host_rsp());
	cpuid_exit();
	EXPECT_EQ(entry_event(), 0u) << "VM entry would refuse an NMI now (SDM 3C 26.3.1.5)";
	EXPECT_TRUE(nmi_window());
	cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] = 0;
	vt_guest_regs r{};
	ASSERT_TRUE(vm_exit(EXIT_REASON_NMI_WINDOW, 0, r));
	EXPECT_EQ(entry_event(), kNmiEvent);
	EXPECT_FALSE(nmi_window());
}

// An NMI that lands while pre-entry work rewrites the primary controls from
// a value read before it: the window bit it set is lost in that write, and
// the handler sets it again last.
TEST_F(RootIdt, AnNmiDuringPreEntryStillOpensTheWindow)
{
	vt_hv_set_callbacks(&hv, &kDebugger);
	g_pre_entry = [this] {
		uint64_t stale = cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL];
		vt_root_nmi(host_rsp());
		cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] = stale;
	};
	cpuid_exit();
	EXPECT_TRUE(vcpu.root_nmi) << "taken at the window's exit";
	EXPECT_TRUE(nmi_window());
	g_pre_entry = nullptr;
	vt_guest_regs r{};
	ASSERT_TRUE(vm_exit(EXIT_REASON_NMI_WINDOW, 0, r));
	EXPECT_EQ(g_debugger_nmis, 1);
	EXPECT_EQ(entry_event(), kNmiEvent) << "the debugger did not claim it";
}

TEST_F(RootIdt, AGpOnAnMsrAccessorContinuesAtItsFixup)
{
	vt_root_frame f{};
	f.vector = 13;
	f.rip = kRdmsrInsn;
	EXPECT_TRUE(vt_root_trap(&f));
	EXPECT_EQ(f.rip, kRdmsrFixup);
	f.rip = kWrmsrInsn;
	EXPECT_TRUE(vt_root_trap(&f));
	EXPECT_EQ(f.rip, kWrmsrFixup);
	EXPECT_TRUE(root_events().empty());
}

// The frame sits on the host stack, where the stub built it.
TEST_F(RootIdt, AnyOtherFaultIsReportedAndHaltsTheCpu)
{
	auto *f = reinterpret_cast<vt_root_frame *>(host_rsp(1024));
	*f = vt_root_frame{};
	f->vector = 13;
	f->rip = kRdmsrInsn + 1;
	f->error = 0x18;
	EXPECT_FALSE(vt_root_trap(f)) << "a #GP anywhere else";
	cpu().cr2 = 0xdead000;
	*f = vt_root_frame{};
	f->vector = 14;
	f->rip = 0xffffffffc0123456ull;
	f->error = 2;
	EXPECT_FALSE(vt_root_trap(f));
	auto ev = root_events();
	ASSERT_EQ(ev.size(), 2u);
	EXPECT_EQ(ev[0].code, VT_RE_ROOT_FAULT);
	EXPECT_EQ(ev[0].arg[0], 13u);
	EXPECT_EQ(ev[0].arg[1], kRdmsrInsn + 1);
	EXPECT_EQ(ev[0].arg[2], 0x18u);
	EXPECT_EQ(ev[1].arg[0], 14u);
	EXPECT_EQ(ev[1].arg[1], 0xffffffffc0123456ull);
	EXPECT_EQ(ev[1].arg[3], 0xdead000u) << "CR2 of a page fault";
}

// Leaving VMX gives the kernel its GDT and IDT back before VMXOFF: root's
// NMI handler writes the VMCS, which VMXOFF takes away.
TEST_F(RootIdt, LeavingRestoresTheKernelsTablesBeforeVmxoff)
{
	vt_desc_ptr gdt = cpu().gdt, idt = cpu().idt;
	cpu().vmcs[GUEST_GDTR_BASE] = gdt.base;
	cpu().vmcs[GUEST_GDTR_LIMIT] = gdt.limit;
	cpu().vmcs[GUEST_IDTR_BASE] = idt.base;
	cpu().vmcs[GUEST_IDTR_LIMIT] = idt.limit;
	vt_guest_regs r{};
	cpuid_exit();
	cpu().trace.clear();
	vt_vcpu_leave_vmx(&vcpu, &r);
	auto &t = cpu().trace;
	auto at = [&](const char *insn) { return std::find(t.begin(), t.end(), insn) - t.begin(); };
	ASSERT_LT(at("vmxoff"), (long)t.size());
	EXPECT_LT(at("lgdt"), at("vmxoff"));
	EXPECT_LT(at("lidt"), at("vmxoff"));
	EXPECT_EQ(cpu().idt.base, idt.base);
	EXPECT_EQ(cpu().gdt.base, gdt.base);
}

}  // namespace
