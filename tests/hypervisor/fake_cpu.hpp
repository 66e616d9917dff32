// Fake CPU for the hypervisor core's unit tests: the core's intrinsics
// (hypervisor/core/intrin.h with VT_FAKE_CPU) and OS interface
// (hypervisor/core/os.h) resolve here. Tests seed MSRs, CPUID leaves,
// control registers and VMCS fields, make any instruction or VMCS field fail,
// and inspect what the core did.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "exit.h"
#include "intrin.h"
#include "os.h"
#include "root_idt.h"
#include "../../hypervisor/debug/dbg_os.h"
}

namespace vtice::fake {

struct Cpu {
	std::map<uint32_t, uint64_t> msrs;	// absent: RDMSR/WRMSR #GP
	std::map<uint32_t, uint64_t> msr_sticky_mask;	// bits that read back after WRMSR
	std::set<uint32_t> msr_read_only;		// RDMSR works, WRMSR #GPs
	std::map<std::pair<uint32_t, uint32_t>, vt_cpuid_regs> cpuid;
	std::map<uint64_t, uint64_t> vmcs;
	std::set<std::string> fail;		// instruction names that fail
	std::set<uint64_t> fail_vmwrite;	// VMCS fields whose VMWRITE fails
	std::vector<std::string> trace;		// privileged instructions executed, in order
	std::vector<uint64_t> cr4_writes;
	uint64_t cr0 = 0x80050033, cr2 = 0, cr3 = 0, cr4 = 0x3506f0, cr8 = 0, dr7 = 0x400;
	uint64_t dr[4] = {0, 0, 0, 0}, dr6 = 0xffff0ff0;	// not switched by VMX
	std::vector<std::pair<uint64_t, uint64_t>> invepts;	// (type, eptp) in order
	uint64_t rflags = 0x2;
	uint64_t xcr0 = 0x7;
	vt_desc_ptr gdt{}, idt{};
	uint16_t cs = 0x10, ss = 0x18, ds = 0, es = 0, fs = 0, gs = 0, tr = 0x40, ldtr = 0;
	bool in_vmx = false;
	uint64_t current_vmcs = ~0ull;
	uint32_t vm_error = 7;			// VM_INSTRUCTION_ERROR after a VMfailValid
	int reload_tr_calls = 0;
	uint64_t random = 0x1122334455667788ull;
	// Runs at each PAUSE (root spinning for something): another CPU's work.
	std::function<void()> on_pause;
	// A hypervisor below: answers VMCALLs executed in VMX root (unset: none).
	std::function<void(vt_guest_regs &)> parent;
	std::vector<vt_guest_regs> parent_calls;	// what it was asked, in order
	std::map<uint16_t, std::deque<uint8_t>> port_in;	// queued bytes per port; empty reads 0xff
	std::vector<std::pair<uint16_t, uint8_t>> port_out;	// OUTs in order

	bool failing(const std::string &insn) const { return fail.count(insn) != 0; }
	size_t count(const std::string &insn) const;
	bool traced(const std::string &insn) const { return count(insn) != 0; }
};

// The CPU every intrinsic acts on; reset() gives a fresh one per test.
Cpu &cpu();
void reset();

// Fake debugger OS (hypervisor/debug/dbg_os.h): where NMI IPIs go, TSC rate.
std::function<void(uint32_t)> &nmi_hook();
uint64_t &tsc_khz();

// Fake OS: page allocations are real, tracked; virt == phys.
size_t live_allocations();
void fail_allocation_after(int n);	// the n+1-th allocation from now fails; -1: never
std::vector<std::string> &log_lines();
// Guest RAM for code that reads guest frames through vt_os_phys_to_virt():
// [gpa, gpa + len) resolves into buf (elsewhere virt == phys). reset() clears.
void map_guest_ram(uint64_t gpa, void *buf, size_t len);

// Seed a CPU with VMX and the given capability MSRs (TRUE or not per basic[55]).
struct VmxProfile {
	const char *name;
	uint64_t basic, pin, proc, proc2, exit, entry, misc, ept_vpid;
	uint64_t cr0_fixed0, cr0_fixed1, cr4_fixed0, cr4_fixed1;
	bool perf_global = false;	// IA32_PERF_GLOBAL_CTRL exists (architectural PMU v2+)
	bool cet = false;		// IA32_S_CET and IA32_INTERRUPT_SSP_TABLE_ADDR exist
};
extern const VmxProfile bochs_skylake_x;	// read from vtice.ko's log in Bochs
extern const VmxProfile skylake;		// a Skylake host (VirtualBox log)
void seed_vmx(const VmxProfile &p);
// p with CET (the CET-state VM-entry/exit controls, CR4.CET, the MSRs).
VmxProfile with_cet(VmxProfile p);

// Linux-like GDT (kernel CS/DS, 64-bit TSS) at a real buffer; sets gdt/idt.
void seed_linux_descriptors();

// root_entry.S stand-ins: the RIPs of the two MSR instructions root may
// fault on, and where vt_root_fixups sends them.
constexpr uint64_t kRdmsrInsn = 0xffffffffc0300010ull, kRdmsrFixup = 0xffffffffc0300040ull;
constexpr uint64_t kWrmsrInsn = 0xffffffffc0300080ull, kWrmsrFixup = 0xffffffffc03000c0ull;

// Simulate a VM exit: the fake "hardware" stores the exit information and
// enters vt_exit_handler with the frame and the vCPU pointer found at HOST_RSP.
bool vm_exit(uint32_t reason, uint64_t qual, vt_guest_regs &regs);

}  // namespace vtice::fake
