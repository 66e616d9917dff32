// The fake CPU and fake OS behind the core's intrinsics (see fake_cpu.hpp).
#include "fake_cpu.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace vtice::fake {
namespace {

// One fake CPU per thread: a test that runs vCPUs on threads gives each its own
// registers and VMCS, as real CPUs have.
thread_local Cpu g_cpu;
std::map<void *, uint32_t> g_allocs;
int g_alloc_countdown = -1;
std::vector<std::string> g_log;
struct GuestRam {
	uint64_t gpa;
	uint8_t *buf;
	size_t len;
};
std::vector<GuestRam> g_guest_ram;
alignas(4096) uint64_t g_kernel_pml4[512];
alignas(16) uint64_t g_gdt[16];
std::atomic<uint64_t> g_tsc;

// VMfailValid needs a current VMCS to hold the error number; without one the
// failure is VMfailInvalid (SDM 3C 31.2).
int fail_valid(uint32_t error)
{
	if (g_cpu.current_vmcs == ~0ull)
		return VT_VMX_FAIL_INVALID;
	g_cpu.vmcs[VM_INSTRUCTION_ERROR] = error;
	return VT_VMX_FAIL_VALID;
}

// What a VM exit does to the host state (SDM Vol. 3C 28.5): the parts the
// devirtualization path must undo.
void load_host_state()
{
	auto &c = g_cpu;
	c.cr0 = c.vmcs[HOST_CR0];
	c.cr3 = c.vmcs[HOST_CR3];
	c.cr4 = c.vmcs[HOST_CR4];
	c.dr7 = 0x400;
	c.msrs[MSR_IA32_DEBUGCTLMSR] = 0;
	c.msrs[MSR_FS_BASE] = c.vmcs[HOST_FS_BASE];
	c.msrs[MSR_GS_BASE] = c.vmcs[HOST_GS_BASE];
	c.gdt = {0xffff, c.vmcs[HOST_GDTR_BASE]};
	c.idt = {0xffff, c.vmcs[HOST_IDTR_BASE]};
	c.ds = c.es = c.fs = c.gs = 0;
	c.ss = (uint16_t)c.vmcs[HOST_SS_SELECTOR];
	c.rflags = 0x2;
}

}  // namespace

Cpu &cpu() { return g_cpu; }

std::function<void(uint32_t)> &nmi_hook()
{
	static std::function<void(uint32_t)> hook;
	return hook;
}

uint64_t &tsc_khz()
{
	static uint64_t khz = 1000000;	// 1 GHz; the fake TSC moves 100 per read
	return khz;
}

size_t Cpu::count(const std::string &insn) const
{
	size_t n = 0;
	for (const auto &t : trace)
		n += t == insn;
	return n;
}

void reset()
{
	for (auto &a : g_allocs)
		std::free(a.first);
	g_allocs.clear();
	g_alloc_countdown = -1;
	g_log.clear();
	g_guest_ram.clear();
	g_cpu = Cpu{};
	std::memset(g_kernel_pml4, 0, sizeof(g_kernel_pml4));
	// Linux leaves slots 256-271 empty: the guard hole reserved for hypervisors.
	for (int i = 272; i < 512; i++)
		g_kernel_pml4[i] = 0x1000000ull * i | 0x63;
	g_cpu.cr3 = reinterpret_cast<uint64_t>(g_kernel_pml4);
	seed_linux_descriptors();
}

size_t live_allocations() { return g_allocs.size(); }
void fail_allocation_after(int n) { g_alloc_countdown = n; }
std::vector<std::string> &log_lines() { return g_log; }
void map_guest_ram(uint64_t gpa, void *buf, size_t len)
{
	g_guest_ram.push_back({gpa, static_cast<uint8_t *>(buf), len});
}

void seed_linux_descriptors()
{
	std::memset(g_gdt, 0, sizeof(g_gdt));
	g_gdt[1] = 0x00cf9b000000ffffull;	// __KERNEL32_CS
	g_gdt[2] = 0x00af9b000000ffffull;	// __KERNEL_CS (0x10): 64-bit code
	g_gdt[3] = 0x00cf93000000ffffull;	// __KERNEL_DS (0x18)
	g_gdt[4] = 0x00cffb000000ffffull;	// __USER32_CS
	g_gdt[5] = 0x00cff3000000ffffull;	// __USER_DS (0x2b)
	g_gdt[6] = 0x00affb000000ffffull;	// __USER_CS (0x33)
	// 64-bit busy TSS at 0x40: base 0xfffffe0000003000, limit 0x4087
	g_gdt[8] = 0x00008b0030004087ull;
	g_gdt[9] = 0x00000000fffffe00ull;
	g_cpu.gdt = {sizeof(g_gdt) - 1, reinterpret_cast<uint64_t>(g_gdt)};
	g_cpu.idt = {0xfff, 0xfffffe0000000000ull};
}

namespace {
void seed_ctl(uint32_t plain, uint32_t true_msr, uint64_t value, uint32_t default1, bool has_true)
{
	// The non-TRUE MSR reports the default-1 class as must-be-1 (SDM 3D A.2).
	g_cpu.msrs[plain] = value | default1;
	if (has_true)
		g_cpu.msrs[true_msr] = value;
}
}  // namespace

VmxProfile with_cet(VmxProfile p)
{
	p.exit |= (uint64_t)VM_EXIT_LOAD_CET_STATE << 32;
	p.entry |= (uint64_t)VM_ENTRY_LOAD_CET_STATE << 32;
	p.cr4_fixed1 |= X86_CR4_CET;
	p.cet = true;
	return p;
}

void seed_vmx(const VmxProfile &p)
{
	auto &c = g_cpu;
	bool has_true = p.basic & VMX_BASIC_TRUE_CTLS;

	c.cpuid[{1, 0}] = {0x50654, 0x00010800, 0x7ffefbff, 0xbfebfbff};
	c.cpuid[{0xd, 0}] = {0x2e7, 0xa88, 0xa88, 0};
	c.cpuid[{0x80000000, 0}] = {0x80000008, 0, 0, 0};
	c.cpuid[{0x80000008, 0}] = {0x3027, 0, 0, 0};	// 39 physical address bits
	c.msrs[MSR_IA32_FEAT_CTL] = FEAT_CTL_LOCKED | FEAT_CTL_VMX_ENABLED_OUTSIDE_SMX;
	c.msrs[MSR_IA32_VMX_BASIC] = p.basic;
	seed_ctl(MSR_IA32_VMX_PINBASED_CTLS, MSR_IA32_VMX_TRUE_PINBASED_CTLS, p.pin, 0x16, has_true);
	seed_ctl(MSR_IA32_VMX_PROCBASED_CTLS, MSR_IA32_VMX_TRUE_PROCBASED_CTLS, p.proc, 0x0401e172,
		 has_true);
	seed_ctl(MSR_IA32_VMX_EXIT_CTLS, MSR_IA32_VMX_TRUE_EXIT_CTLS, p.exit, 0x36dff, has_true);
	seed_ctl(MSR_IA32_VMX_ENTRY_CTLS, MSR_IA32_VMX_TRUE_ENTRY_CTLS, p.entry, 0x11ff, has_true);
	c.msrs[MSR_IA32_VMX_PROCBASED_CTLS2] = p.proc2;
	c.msrs[MSR_IA32_VMX_EPT_VPID_CAP] = p.ept_vpid;
	c.msrs[MSR_IA32_VMX_MISC] = p.misc;
	c.msrs[MSR_IA32_VMX_CR0_FIXED0] = p.cr0_fixed0;
	c.msrs[MSR_IA32_VMX_CR0_FIXED1] = p.cr0_fixed1;
	c.msrs[MSR_IA32_VMX_CR4_FIXED0] = p.cr4_fixed0;
	c.msrs[MSR_IA32_VMX_CR4_FIXED1] = p.cr4_fixed1;
	c.msrs[MSR_IA32_VMX_VMCS_ENUM] = 0x2e;
	c.msrs[MSR_IA32_VMX_VMFUNC] = 1;
	if (p.perf_global)
		c.msrs[MSR_CORE_PERF_GLOBAL_CTRL] = 0x70000000full;	// 4 GP, 3 fixed counters on
	if (p.cet) {
		c.msrs[MSR_IA32_S_CET] = CET_ENDBR_EN;			// an IBT kernel
		c.msrs[MSR_IA32_INT_SSP_TAB] = 0;
		c.msrs[MSR_IA32_U_CET] = 0;
		c.msrs[MSR_IA32_PL3_SSP] = 0;
	}
	for (uint32_t m : std::initializer_list<uint32_t>{MSR_IA32_DEBUGCTLMSR, MSR_IA32_SYSENTER_CS, MSR_IA32_SYSENTER_ESP,
			   MSR_IA32_SYSENTER_EIP, MSR_KERNEL_GS_BASE, MSR_FS_BASE})
		c.msrs[m] = 0;
	c.msrs[MSR_IA32_SYSENTER_CS] = 0x10;
	c.msrs[MSR_GS_BASE] = 0xffff88803ec00000ull;
	c.msrs[MSR_IA32_CR_PAT] = 0x0407050600070106ull;
	c.msrs[MSR_EFER] = 0xd01;
	// The BSP's local APIC at its reset base, enabled, in x2APIC mode, ID 0.
	c.msrs[MSR_IA32_APICBASE] = 0xfee00000ull | MSR_IA32_APICBASE_ENABLE | MSR_IA32_APICBASE_EXTD | (1u << 8);
	c.msrs[MSR_X2APIC_APICID] = 0;
	// Linux's timer LVT (TSC-deadline mode, vector 0xec), the APIC enabled.
	c.msrs[MSR_X2APIC_LVTT] = 0x400ec;
	c.msrs[MSR_X2APIC_SPIV] = 0x1ff;
	c.msrs[MSR_MTRRcap] = 0x508;		// 8 variable ranges, fixed ranges, WC
	c.msrs[MSR_MTRRdefType] = MTRR_DEF_TYPE_E | MTRR_DEF_TYPE_FE | MTRR_TYPE_WRBACK;
	for (uint32_t i = 0; i < 16; i++)
		c.msrs[MSR_MTRRphysBase0 + i] = 0;
	for (uint32_t m : std::initializer_list<uint32_t>{MSR_MTRRfix64K_00000, MSR_MTRRfix16K_80000, MSR_MTRRfix16K_A0000})
		c.msrs[m] = 0x0606060606060606ull;
	for (uint32_t i = 0; i < 8; i++)
		c.msrs[MSR_MTRRfix4K_C0000 + i] = 0x0606060606060606ull;
}

// Values logged by vtice.ko ("vtice: VMX basic ...") in Bochs
// 2.7 corei7_skylake_x, see docs/hypervisor.md. Bochs has no PMU: its VMX
// offers to switch IA32_PERF_GLOBAL_CTRL, but RDMSR 0x38f raises #GP.
const VmxProfile bochs_skylake_x = {
	"bochs_corei7_skylake_x", 0xd810000000002bull, 0x7f00000016ull, 0xf7f9fffe04006172ull,
	0x2177fff00000000ull, 0x7fffff00036dfbull, 0xffff000011fbull, 0x600401e0ull,
	0xf0106334141ull, 0x80000021ull, 0xffffffffull, 0x2000ull, 0x3727ffull,
};

// TRUE controls, MISC and CR fixed MSRs of a Skylake host as VirtualBox logged
// them (public report myspaghetti/macos-virtualbox#224); secondary controls
// and EPT/VPID capabilities typical of that generation.
const VmxProfile skylake = {
	"skylake", 0xda040000000004ull, 0x7f00000016ull, 0xfff9fffe04006172ull,
	0x5ffcff00000000ull, 0x1ffffff00036dfbull, 0x3ffff000011fbull, 0x7004c1e7ull,
	0xf0106f34141ull, 0x80000021ull, 0xffffffffull, 0x2000ull, 0x3767ffull, true,
};

bool vm_exit(uint32_t reason, uint64_t qual, vt_guest_regs &regs)
{
	struct {
		vt_guest_regs regs;
		vt_vcpu *vcpu;
	} frame;
	auto &c = g_cpu;

	c.vmcs[VM_EXIT_REASON] = reason;
	c.vmcs[EXIT_QUALIFICATION] = qual;
	c.vmcs[VM_ENTRY_INTR_INFO_FIELD] = 0;
	load_host_state();
	frame.regs = regs;
	frame.vcpu = *reinterpret_cast<vt_vcpu **>(c.vmcs[HOST_RSP]);
	vt_guest_regs *before = frame.vcpu->regs;	// the handler points it at this frame
	bool resume = vt_exit_handler(&frame.regs);
	frame.vcpu->regs = before;
	regs = frame.regs;
	return resume;
}

}  // namespace vtice::fake

using vtice::fake::fail_valid;
using vtice::fake::g_cpu;

extern "C" {

void vt_cpuid(u32 leaf, u32 subleaf, struct vt_cpuid_regs *out)
{
	auto it = g_cpu.cpuid.find({leaf, subleaf});
	if (it == g_cpu.cpuid.end())
		it = g_cpu.cpuid.find({leaf, 0});
	*out = it == g_cpu.cpuid.end() ? vt_cpuid_regs{0, 0, 0, 0} : it->second;
}

int vt_rdmsr_safe(u32 msr, u64 *value)
{
	auto it = g_cpu.msrs.find(msr);
	if (it == g_cpu.msrs.end() || g_cpu.failing("rdmsr")) {
		g_cpu.trace.push_back("rdmsr#GP");
		return -5;
	}
	*value = it->second;
	return 0;
}

int vt_wrmsr_safe(u32 msr, u64 value)
{
	// An NMI sent by the x2APIC ICR (core/apic.c): destination APIC ID in
	// bits 63:32; the tests give each vCPU its CPU number as APIC ID.
	if (msr == MSR_X2APIC_ICR && (value & 0x700) == APIC_DM_NMI) {
		if (vtice::fake::nmi_hook())
			vtice::fake::nmi_hook()(static_cast<uint32_t>(value >> 32));
		return 0;
	}
	if (!g_cpu.msrs.count(msr) || g_cpu.msr_read_only.count(msr) || g_cpu.failing("wrmsr")) {
		g_cpu.trace.push_back("wrmsr#GP");
		return -5;
	}
	auto sticky = g_cpu.msr_sticky_mask.find(msr);
	g_cpu.msrs[msr] = sticky == g_cpu.msr_sticky_mask.end() ? value : value & sticky->second;
	g_cpu.trace.push_back("wrmsr");
	return 0;
}

u64 vt_rdmsr(u32 msr)
{
	u64 v = 0;
	vt_rdmsr_safe(msr, &v);
	return v;
}

void vt_wrmsr(u32 msr, u64 value)
{
	if (!g_cpu.msrs.count(msr))
		g_cpu.msrs[msr] = 0;
	vt_wrmsr_safe(msr, value);
}

u64 vt_read_cr0(void) { return g_cpu.cr0; }
u64 vt_read_cr2(void) { return g_cpu.cr2; }
u64 vt_read_cr3(void) { return g_cpu.cr3; }
u64 vt_read_cr4(void) { return g_cpu.cr4; }
u64 vt_read_cr8(void) { return g_cpu.cr8; }
void vt_write_cr0(u64 v) { g_cpu.cr0 = v; g_cpu.trace.push_back("write_cr0"); }
void vt_write_cr2(u64 v) { g_cpu.cr2 = v; }
void vt_write_cr3(u64 v) { g_cpu.cr3 = v; g_cpu.trace.push_back("write_cr3"); }
void vt_write_cr4(u64 v)
{
	g_cpu.cr4 = v;
	g_cpu.cr4_writes.push_back(v);
	g_cpu.trace.push_back("write_cr4");
}
void vt_write_cr8(u64 v) { g_cpu.cr8 = v; }
u64 vt_read_dr7(void) { return g_cpu.dr7; }
void vt_write_dr7(u64 v) { g_cpu.dr7 = v; }
u64 vt_read_dr(u32 n)
{
	return n < 4 ? g_cpu.dr[n] : n == 6 ? g_cpu.dr6 : 0;
}
void vt_write_dr(u32 n, u64 v)
{
	if (n < 4)
		g_cpu.dr[n] = v;
	else if (n == 6)
		g_cpu.dr6 = v;
	g_cpu.trace.push_back("write_dr" + std::to_string(n));
}
u64 vt_read_rflags(void) { return g_cpu.rflags; }
void vt_sgdt(struct vt_desc_ptr *p) { *p = g_cpu.gdt; }
void vt_sidt(struct vt_desc_ptr *p) { *p = g_cpu.idt; }
void vt_lgdt(const struct vt_desc_ptr *p) { g_cpu.gdt = *p; g_cpu.trace.push_back("lgdt"); }
void vt_lidt(const struct vt_desc_ptr *p) { g_cpu.idt = *p; g_cpu.trace.push_back("lidt"); }
u16 vt_str(void) { return g_cpu.tr; }
u16 vt_sldt(void) { return g_cpu.ldtr; }
u16 vt_read_cs(void) { return g_cpu.cs; }
u16 vt_read_ss(void) { return g_cpu.ss; }
u16 vt_read_ds(void) { return g_cpu.ds; }
u16 vt_read_es(void) { return g_cpu.es; }
u16 vt_read_fs(void) { return g_cpu.fs; }
u16 vt_read_gs(void) { return g_cpu.gs; }
void vt_write_ds(u16 s) { g_cpu.ds = s; }
void vt_write_es(u16 s) { g_cpu.es = s; }
void vt_write_fs(u16 s) { g_cpu.fs = s; g_cpu.msrs[MSR_FS_BASE] = 0; }
void vt_write_gs(u16 s) { g_cpu.gs = s; g_cpu.msrs[MSR_GS_BASE] = 0; }
void vt_write_ss(u16 s) { g_cpu.ss = s; }
bool vt_lar(u16, u32 *ar) { *ar = 0; return false; }
bool vt_lsl(u16, u32 *limit) { *limit = 0; return false; }
u64 vt_rdtsc(void) { return vtice::fake::g_tsc += 100; }
u64 vt_xgetbv(u32) { return g_cpu.xcr0; }
void vt_xsetbv(u32, u64 value) { g_cpu.xcr0 = value; g_cpu.trace.push_back("xsetbv"); }
void vt_wbinvd(void) { g_cpu.trace.push_back("wbinvd"); }

int vt_vmxon(u64 pa)
{
	g_cpu.trace.push_back("vmxon");
	// VMXON needs CR4.VMXE and a region carrying the revision id (SDM 3C 31.5).
	auto *region = reinterpret_cast<u32 *>(pa);
	if (g_cpu.failing("vmxon") || !(g_cpu.cr4 & X86_CR4_VMXE) || g_cpu.in_vmx ||
	    *region != (u32)(g_cpu.msrs[MSR_IA32_VMX_BASIC] & VMX_BASIC_REVISION_MASK))
		return VT_VMX_FAIL_INVALID;
	g_cpu.in_vmx = true;
	return VT_VMX_OK;
}

void vt_vmxoff(void)
{
	g_cpu.trace.push_back("vmxoff");
	g_cpu.in_vmx = false;
	g_cpu.current_vmcs = ~0ull;
}

int vt_vmclear(u64 pa)
{
	g_cpu.trace.push_back("vmclear");
	if (!g_cpu.in_vmx)
		return VT_VMX_FAIL_INVALID;
	if (g_cpu.failing("vmclear"))
		return fail_valid(2);	// VMCLEAR with invalid physical address
	if (g_cpu.current_vmcs == pa)
		g_cpu.current_vmcs = ~0ull;
	return VT_VMX_OK;
}

int vt_vmptrld(u64 pa)
{
	g_cpu.trace.push_back("vmptrld");
	if (!g_cpu.in_vmx)
		return VT_VMX_FAIL_INVALID;
	if (g_cpu.failing("vmptrld"))
		return fail_valid(9);	// VMPTRLD with invalid physical address
	g_cpu.current_vmcs = pa;
	return VT_VMX_OK;
}

int vt_vmread(u64 field, u64 *value)
{
	if (!g_cpu.in_vmx || g_cpu.current_vmcs == ~0ull)
		return VT_VMX_FAIL_INVALID;
	if (g_cpu.failing("vmread"))
		return fail_valid(12);
	*value = g_cpu.vmcs[field];
	return VT_VMX_OK;
}

int vt_vmwrite(u64 field, u64 value)
{
	if (!g_cpu.in_vmx || g_cpu.current_vmcs == ~0ull)
		return VT_VMX_FAIL_INVALID;
	if (g_cpu.failing("vmwrite") || g_cpu.fail_vmwrite.count(field))
		return fail_valid(12);	// VMREAD/VMWRITE unsupported component
	g_cpu.vmcs[field] = value;
	return VT_VMX_OK;
}

int vt_invept(u64 type, u64 eptp)
{
	g_cpu.trace.push_back("invept");
	g_cpu.invepts.push_back({type, eptp});
	return g_cpu.failing("invept") ? fail_valid(28) : VT_VMX_OK;
}

u8 vt_inb(u16 port)
{
	auto &q = g_cpu.port_in[port];
	u8 v;

	if (q.empty())
		return 0xff;	// nothing decodes the port: the bus floats high
	v = q.front();
	q.pop_front();
	return v;
}

void vt_outb(u16 port, u8 value) { g_cpu.port_out.emplace_back(port, value); }
void vt_invlpg(u64) { g_cpu.trace.push_back("invlpg"); }
void vt_pause(void)
{
	if (g_cpu.on_pause)
		g_cpu.on_pause();
}

int vt_invvpid(u64, u16, u64)
{
	g_cpu.trace.push_back("invvpid");
	return g_cpu.failing("invvpid") ? fail_valid(28) : VT_VMX_OK;
}

// VMCALL from VMX root: goes to the parent hypervisor when the test set
// one (a fake KVM); a test without one must never get here.
void vt_parent_vmcall(vt_guest_regs *regs)
{
	g_cpu.trace.push_back("parent_vmcall");
	g_cpu.parent_calls.push_back(*regs);
	if (g_cpu.parent)
		g_cpu.parent(*regs);
	else
		ADD_FAILURE() << "VMCALL from root with no parent hypervisor";
}

// The guest side of VMCALL: with a hypervisor it is a VM exit (reason 18,
// 3-byte instruction); on a bare CPU it would be #UD, reported as ~0.
u64 vt_vmcall(u64 func, u64 key, u64 a1, u64 a2, u64 a3, u64 a4, u64 *out_rdx)
{
	vt_guest_regs regs{};

	g_cpu.trace.push_back("vmcall");
	if (!g_cpu.in_vmx)
		return ~0ull;
	regs.rax = func;
	regs.rcx = key;
	regs.rdx = a1;
	regs.r8 = a2;
	regs.r9 = a3;
	regs.r10 = a4;
	g_cpu.vmcs[VM_EXIT_INSTRUCTION_LEN] = 3;
	vtice::fake::vm_exit(EXIT_REASON_VMCALL, 0, regs);
	if (g_cpu.vmcs[VM_ENTRY_INTR_INFO_FIELD] & INTR_INFO_VALID_MASK)
		return ~0ull;
	if (out_rdx)
		*out_rdx = regs.rdx;
	return regs.rax;
}

int vt_vmx_launch(void)
{
	g_cpu.trace.push_back("vmlaunch");
	if (g_cpu.failing("vmlaunch")) {
		g_cpu.vmcs[VM_INSTRUCTION_ERROR] = 7;	// invalid control fields
		return VT_LAUNCH_FAILED;
	}
	g_cpu.vmcs[GUEST_RIP] = 0xffffffffc0001000ull;
	g_cpu.vmcs[GUEST_RSP] = 0xffffc90000010000ull;
	return 0;
}

void vt_vmexit_stub(void)
{
}

// root_entry.S stand-ins: entry points are only written into the IDT.
void vt_root_nmi_entry(void)
{
}

const u64 vt_root_vectors[256] = {
#define VT_FAKE_VECTOR(v) 0xffffffffc0200000ull + 16 * (v)
#define VT_FAKE_VECTORS4(v) VT_FAKE_VECTOR(v), VT_FAKE_VECTOR(v + 1), VT_FAKE_VECTOR(v + 2), VT_FAKE_VECTOR(v + 3)
#define VT_FAKE_VECTORS16(v) VT_FAKE_VECTORS4(v), VT_FAKE_VECTORS4(v + 4), VT_FAKE_VECTORS4(v + 8), VT_FAKE_VECTORS4(v + 12)
#define VT_FAKE_VECTORS64(v) VT_FAKE_VECTORS16(v), VT_FAKE_VECTORS16(v + 16), VT_FAKE_VECTORS16(v + 32), VT_FAKE_VECTORS16(v + 48)
	VT_FAKE_VECTORS64(0), VT_FAKE_VECTORS64(64), VT_FAKE_VECTORS64(128), VT_FAKE_VECTORS64(192),
};

const u64 vt_root_fixups[] = {
	vtice::fake::kRdmsrInsn, vtice::fake::kRdmsrFixup,
	vtice::fake::kWrmsrInsn, vtice::fake::kWrmsrFixup,
	0, 0,
};

void *vt_os_alloc_pages(u32 count)
{
	if (vtice::fake::g_alloc_countdown == 0)
		return nullptr;
	if (vtice::fake::g_alloc_countdown > 0)
		vtice::fake::g_alloc_countdown--;
	// Like the kernel's buddy allocator: 2^order pages, aligned to their size.
	uint64_t bytes = 4096;
	while (bytes < count * 4096ull)
		bytes *= 2;
	void *p = std::aligned_alloc(bytes, bytes);
	std::memset(p, 0, bytes);
	vtice::fake::g_allocs[p] = count;
	return p;
}

void vt_os_free_pages(void *p, u32 count)
{
	auto it = vtice::fake::g_allocs.find(p);
	if (it == vtice::fake::g_allocs.end() || it->second != count) {
		ADD_FAILURE() << "vt_os_free_pages(" << p << ", " << count
			      << "): not a live allocation of that size (freed twice?)";
		return;
	}
	vtice::fake::g_allocs.erase(it);
	std::free(p);
}


u64 vt_os_tsc_khz(void) { return vtice::fake::tsc_khz(); }
// The shield of the module image is the Linux layer's (shield_os.c); no image here.
int vt_os_shield_image(const void *, u64) { return 0; }
u64 vt_os_virt_to_phys(const void *p) { return reinterpret_cast<u64>(p); }
void *vt_os_phys_to_virt(u64 pa)
{
	for (const auto &r : vtice::fake::g_guest_ram)
		if (pa >= r.gpa && pa - r.gpa < r.len)
			return r.buf + (pa - r.gpa);
	return reinterpret_cast<void *>(pa);
}
u64 vt_os_random_u64(void) { return g_cpu.random; }
void vt_os_reload_tr(void) { g_cpu.reload_tr_calls++; }

void vt_os_log(int, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	std::vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	vtice::fake::g_log.push_back(buf);
}

}  // extern "C"
