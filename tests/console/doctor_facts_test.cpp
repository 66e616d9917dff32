// vtice doctor's machine facts against the kernel's own view of the same
// CPU (/proc/cpuinfo, which the kernel filled from CPUID at boot) and the
// coreutils' (uname -r, nproc): independent readers of the same facts.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "doctor/machine_facts.hpp"

namespace vtice::console::doctor {
namespace {

std::string command_output(const char *command)
{
	std::string out;
	if (FILE *p = popen(command, "r")) {
		char buf[256];
		while (fgets(buf, sizeof(buf), p))
			out += buf;
		pclose(p);
	}
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

}  // namespace
}  // namespace vtice::console::doctor
