#include "machine_facts.hpp"

#include <cpuid.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "vtice/escape.hpp"

namespace vtice::console::doctor {

namespace {

struct Regs {
	unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(unsigned leaf)
{
	Regs r;
	__cpuid_count(leaf, 0, r.a, r.b, r.c, r.d);
	return r;
}

std::string chars(std::initializer_list<unsigned> words)
{
	std::string out;
	for (unsigned w : words)
		out.append(reinterpret_cast<const char *>(&w), 4);
	out.resize(std::strlen(out.c_str()));
	return escape_text(out, Layout::Field);
}

std::string trim(std::string text)
{
	text.erase(0, text.find_first_not_of(" \t"));
	text.erase(text.find_last_not_of(" \t\n") + 1);
	return text;
}

// The value of KEY in /proc/cpuinfo's first processor, or "".
std::string cpuinfo_value(const std::string &key)
{
	std::ifstream in("/proc/cpuinfo");
	for (std::string line; std::getline(in, line);) {
		std::size_t colon = line.find(':');
		if (colon != std::string::npos && trim(line.substr(0, colon)) == key)
			return trim(line.substr(colon + 1));
		if (line.empty())
			break;
	}
	return "";
}

bool has_word(const std::string &list, const std::string &word)
{
	std::istringstream words(list);
	for (std::string w; words >> w;)
		if (w == word)
			return true;
	return false;
}

// "none [integrity] confidentiality" -> "integrity".
std::string lockdown_mode()
{
	std::ifstream in("/sys/kernel/security/lockdown");
	std::string line;
	std::getline(in, line);
	std::size_t open = line.find('['), close = line.find(']');
	return open != std::string::npos && close > open ? line.substr(open + 1, close - open - 1) : "";
}

}  // namespace

MachineFacts read_machine_facts()
{
	MachineFacts f;
	Regs leaf0 = cpuid(0);
	f.vendor = chars({leaf0.b, leaf0.d, leaf0.c});
	Regs leaf1 = cpuid(1);
	unsigned base_family = (leaf1.a >> 8) & 0xf, base_model = (leaf1.a >> 4) & 0xf;
	f.family = base_family == 0xf ? base_family + ((leaf1.a >> 20) & 0xff) : base_family;
	f.model = base_family == 0x6 || base_family == 0xf ? base_model | (((leaf1.a >> 16) & 0xf) << 4) : base_model;
	f.stepping = leaf1.a & 0xf;
	// The name the kernel gave the CPU at boot, as users know it: a VM's
	// brand string may change under it later (a parent hypervisor that
	// migrated it). CPUID's own, without /proc.
	f.cpu = escape_text(cpuinfo_value("model name"), Layout::Field);
	if (f.cpu.empty() && cpuid(0x80000000).a >= 0x80000004) {
		Regs b[3] = {cpuid(0x80000002), cpuid(0x80000003), cpuid(0x80000004)};
		f.cpu = trim(chars({b[0].a, b[0].b, b[0].c, b[0].d, b[1].a, b[1].b, b[1].c, b[1].d, b[2].a, b[2].b,
				    b[2].c, b[2].d}));
	}
	if (f.cpu.empty())
		f.cpu = f.vendor;
	// CPUID.1:ECX[31]: a hypervisor runs below; its vendor at 0x40000000.
	if (leaf1.c & (1u << 31)) {
		Regs hv = cpuid(0x40000000);
		f.parent = chars({hv.b, hv.c, hv.d});
		if (f.parent.empty())
			f.parent = "a hypervisor (no vendor string)";
	} else {
		f.parent = "none (bare metal)";
	}
	f.microcode = escape_text(cpuinfo_value("microcode"), Layout::Field);
	std::string flags = cpuinfo_value("flags");
	f.vmx_at_boot = has_word(flags, "vmx");
	f.vmx_flags = cpuinfo_value("vmx flags");
	for (const char *cet : {"ibt", "user_shstk"})
		if (has_word(flags, cet))
			f.cet.emplace_back(cet);
	utsname u{};
	if (uname(&u) == 0) {
		f.kernel = escape_text(u.release, Layout::Field);
		f.kernel_version = escape_text(u.version, Layout::Field);
	}
	f.lockdown = lockdown_mode();
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	f.online_cpus = online > 0 ? static_cast<unsigned>(online) : 0;
	return f;
}

std::vector<std::string> missing_vmx_features(const std::string &vmx_flags)
{
	// The kernel's names (arch/x86/include/asm/vmxfeatures.h), the module's.
	static const std::pair<const char *, const char *> needed[] = {
		{"ept", "EPT (extended page tables)"},
		{"unrestricted_guest", "unrestricted guest"},
		{"vnmi", "virtual NMIs"},
	};
	std::vector<std::string> missing;
	if (vmx_flags.empty())
		return missing;
	for (const auto &[flag, name] : needed)
		if (!has_word(vmx_flags, flag))
			missing.emplace_back(name);
	return missing;
}

std::vector<std::pair<std::string, std::string>> MachineFacts::rows() const
{
	char fms[64];
	std::snprintf(fms, sizeof(fms), "family %u model %u (0x%x) stepping %u", family, model, model, stepping);
	std::string cet_list;
	for (const std::string &c : cet)
		cet_list += (cet_list.empty() ? "" : " ") + c;
	return {
		{"cpu", cpu + " (" + vendor + ", " + fms + ")"},
		{"microcode", microcode.empty() ? "not shown by /proc/cpuinfo" : microcode},
		{"kernel", kernel + " " + kernel_version},
		{"hypervisor below", parent},
		{"vmx at boot", vmx_at_boot ? "yes" : "no (the kernel's flags lack vmx)"},
		{"cet", cet_list.empty() ? "off" : cet_list},
		{"lockdown", lockdown.empty() ? "none or unknown" : lockdown},
		{"online cpus", std::to_string(online_cpus)},
	};
}

}  // namespace vtice::console::doctor
