// What a vtice doctor report says about the machine it ran on: the CPU as
// CPUID and /proc/cpuinfo name it, its microcode, the kernel, and whether a
// hypervisor runs below this kernel (vtice then runs nested).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace vtice::console::doctor {

struct MachineFacts {
	std::string cpu;		// the brand string, else the vendor
	std::string vendor;		// CPUID 0: "GenuineIntel"
	unsigned family = 0, model = 0, stepping = 0;
	std::string microcode;		// /proc/cpuinfo, "" if not shown
	std::string kernel;		// uname -r
	std::string kernel_version;	// uname -v
	std::string parent;		// CPUID 0x40000000's vendor, or "none (bare metal)"
	bool vmx_at_boot = false;	// the kernel's boot-time "vmx" flag
	// The kernel's "vmx flags" line (Linux 5.8+, CONFIG_X86_VMX_FEATURE_NAMES):
	// the VT-x controls it read at boot; "" when the kernel shows none.
	std::string vmx_flags;
	std::vector<std::string> cet;	// "ibt", "user_shstk" as the kernel lists them
	std::string lockdown;		// /sys/kernel/security/lockdown's choice, or ""
	unsigned online_cpus = 0;

	// "label: value" lines, in the order a report shows them.
	std::vector<std::pair<std::string, std::string>> rows() const;
};

// Read before the module loads: the hypervisor bit is the parent's then.
MachineFacts read_machine_facts();

// What vtice needs of VT-x that a "vmx flags" line can show and LINE lacks,
// by name ("EPT (extended page tables)"); empty if LINE is "" (unknown).
// The module refuses such a CPU at load (hypervisor/core/vmx_caps.c); its
// other needs (MSR bitmaps, NMI-window exiting) the kernel never lists.
std::vector<std::string> missing_vmx_features(const std::string &vmx_flags);


}  // namespace vtice::console::doctor
