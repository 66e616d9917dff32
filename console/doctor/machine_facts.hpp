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
	std::vector<std::string> cet;	// "ibt", "user_shstk" as the kernel lists them
	std::string lockdown;		// /sys/kernel/security/lockdown's choice, or ""
	unsigned online_cpus = 0;

	// "label: value" lines, in the order a report shows them.
	std::vector<std::pair<std::string, std::string>> rows() const;
};

// Read before the module loads: the hypervisor bit is the parent's then.
MachineFacts read_machine_facts();


}  // namespace vtice::console::doctor
