// vtice doctor's machine facts against the kernel's own view of the same
// CPU (/proc/cpuinfo, which the kernel filled from CPUID at boot) and the
// coreutils' (uname -r, nproc): independent readers of the same facts.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "command_output.hpp"
#include "doctor/machine_facts.hpp"

namespace vtice::console::doctor {
namespace {

// The command's output without its last newlines.
std::string command_output(const char *command)
{
	std::string out = test::command_output(command);
	while (!out.empty() && out.back() == '\n')
		out.pop_back();
	return out;
}

std::string cpuinfo(const std::string &key)
{
	return command_output(("awk -F': *' '$1 ~ /^" + key + "[ \\t]*$/ { print $2; exit }' /proc/cpuinfo").c_str());
}

TEST(DoctorFacts, TheCpuIsTheOneTheKernelNamed)
{
	MachineFacts f = read_machine_facts();
	EXPECT_EQ(f.vendor, cpuinfo("vendor_id"));
	EXPECT_EQ(std::to_string(f.family), cpuinfo("cpu family"));
	EXPECT_EQ(std::to_string(f.model), cpuinfo("model"));
	EXPECT_EQ(std::to_string(f.stepping), cpuinfo("stepping"));
	EXPECT_EQ(f.cpu, cpuinfo("model name"));
	EXPECT_EQ(f.microcode, cpuinfo("microcode"));
}

TEST(DoctorFacts, KernelAndCpusAreTheOnesTheToolsSee)
{
	MachineFacts f = read_machine_facts();
	EXPECT_EQ(f.kernel, command_output("uname -r"));
	EXPECT_EQ(std::to_string(f.online_cpus), command_output("grep -c ^processor /proc/cpuinfo"));
	bool vmx = command_output("grep -qw vmx /proc/cpuinfo && echo yes") == "yes";
	EXPECT_EQ(f.vmx_at_boot, vmx);
	bool hypervisor = command_output("grep -qw hypervisor /proc/cpuinfo && echo yes") == "yes";
	EXPECT_EQ(f.parent != "none (bare metal)", hypervisor);
}

// Lines in the kernel's format (show_cpuinfo: the names of
// arch/x86/include/asm/vmxfeatures.h, space-separated).
TEST(DoctorFacts, AVmxFlagsLineWithoutEptNamesWhatIsMissing)
{
	// Core 2 (Penryn): VT-x without secondary controls, so no EPT and no
	// unrestricted guest; it has virtual NMIs.
	std::vector<std::string> missing = missing_vmx_features("vnmi flexpriority tsc_offset");
	EXPECT_EQ(missing, (std::vector<std::string>{"EPT (extended page tables)", "unrestricted guest"}));
	// A word that starts like a needed one is not it.
	missing = missing_vmx_features("vnmi preemption_timer ept_x_only ept_ad ept_1gb unrestricted_guest");
	EXPECT_EQ(missing, (std::vector<std::string>{"EPT (extended page tables)"}));
}

TEST(DoctorFacts, AFullLineOrNoLineRefusesNothing)
{
	EXPECT_TRUE(missing_vmx_features("vnmi preemption_timer posted_intr invvpid ept_x_only ept_ad ept_1gb "
					 "flexpriority apicv tsc_offset vtpr mtf vapic ept vpid unrestricted_guest "
					 "vapic_reg vid ple shadow_vmcs pml ept_mode_based_exec")
			    .empty());
	// A kernel without CONFIG_X86_VMX_FEATURE_NAMES shows no line: unknown,
	// so the load decides.
	EXPECT_TRUE(missing_vmx_features("").empty());
}

}  // namespace
}  // namespace vtice::console::doctor
