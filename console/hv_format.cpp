#include "hv_format.hpp"

#include <asm/vmx.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <utility>

namespace vtice::console {

namespace {

struct ReasonName {
	unsigned reason;
	const char *name;
};

// The kernel's own table of exit reason names (SDM Vol. 3D, Appendix C).
const ReasonName kReasonNames[] = {VMX_EXIT_REASONS};

std::string printf_string(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

std::string printf_string(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return buf;
}

bool cpu_virtualized(const vtice_status &status, unsigned cpu)
{
	return cpu < VTICE_MAX_CPUS && (status.virtualized[cpu / 64] >> (cpu % 64)) & 1;
}

std::string header_row(const std::vector<vtice_cpu_stats> &cpus)
{
	std::string row = printf_string("%-24s", "EXIT REASON");
	for (const auto &c : cpus)
		row += printf_string(" %12s", printf_string("CPU%u", c.cpu).c_str());
	return row + "\n";
}

std::string state_row(const vtice_status &status, const std::vector<vtice_cpu_stats> &cpus)
{
	std::string row = printf_string("%-24s", "state");
	for (const auto &c : cpus) {
		bool on = (c.flags & VTICE_CPU_VIRTUALIZED) && cpu_virtualized(status, c.cpu);
		row += printf_string(" %12s", on ? "virtualized" : "plain");
	}
	return row + "\n";
}

template <class Get>
std::string count_row(const std::string &label, const std::vector<vtice_cpu_stats> &cpus, Get get)
{
	std::string row = printf_string("%-24s", label.c_str());
	for (const auto &c : cpus)
		row += printf_string(" %12" PRIu64, static_cast<uint64_t>(get(c)));
	return row + "\n";
}

}  // namespace

std::string exit_reason_name(unsigned reason)
{
	for (const auto &entry : kReasonNames)
		if (entry.reason == reason)
			return entry.name;
	return "REASON_" + std::to_string(reason);
}

std::string format_status(const vtice_status &status, const std::vector<vtice_cpu_stats> &cpus)
{
	std::string out = printf_string(
		"vtice hypervisor: %u of %zu CPUs virtualized, %" PRIu64 " VM exits\n",
		status.nr_virtualized, cpus.size(), static_cast<uint64_t>(status.total_exits));
	out += printf_string("ring: %u records per CPU, %u bytes mmap per CPU\n\n",
			     status.ring_records, status.ring_mmap_size);
	out += header_row(cpus) + state_row(status, cpus);
	for (unsigned r = 0; r < VTICE_EXIT_REASON_SLOTS; r++) {
		bool seen = false;
		for (const auto &c : cpus)
			seen |= c.exits[r] != 0;
		if (seen)
			out += count_row(printf_string("%s (%u)", exit_reason_name(r).c_str(), r), cpus,
					 [r](const vtice_cpu_stats &c) { return c.exits[r]; });
	}
	bool unknown = false;
	for (const auto &c : cpus)
		unknown |= c.exits_unknown != 0;
	if (unknown)
		out += count_row("other (>= " + std::to_string(VTICE_EXIT_REASON_SLOTS) + ")", cpus,
				 [](const vtice_cpu_stats &c) { return c.exits_unknown; });
	out += count_row("total", cpus, [](const vtice_cpu_stats &c) { return c.exits_total; });
	return out;
}

std::string format_caps(const vtice_caps &caps)
{
	static const std::pair<uint64_t, const char *> kFlags[] = {
		{VTICE_CAP_VMX, "VMX"},
		{VTICE_CAP_TRUE_CTLS, "TRUE control MSRs"},
		{VTICE_CAP_EPT, "EPT"},
		{VTICE_CAP_EPT_2M, "EPT 2 MiB pages"},
		{VTICE_CAP_EPT_1G, "EPT 1 GiB pages"},
		{VTICE_CAP_EPT_AD, "EPT accessed/dirty bits"},
		{VTICE_CAP_EPT_EXEC_ONLY, "EPT execute-only"},
		{VTICE_CAP_INVEPT_SINGLE, "INVEPT single-context"},
		{VTICE_CAP_VPID, "VPID"},
		{VTICE_CAP_MTF, "monitor trap flag"},
		{VTICE_CAP_PREEMPT_TIMER, "preemption timer"},
		{VTICE_CAP_UNRESTRICTED, "unrestricted guest"},
		{VTICE_CAP_MSR_BITMAP, "MSR bitmaps"},
		{VTICE_CAP_DEBUGCTL_BTF, "DEBUGCTL.BTF (probed)"},
		{VTICE_CAP_DEBUGCTL_LBR, "DEBUGCTL.LBR (probed)"},
	};
	std::string out = "VMX capabilities\n";
	for (const auto &[bit, name] : kFlags)
		out += printf_string("  %-26s %s\n", name, (caps.flags & bit) ? "yes" : "no");
	if (caps.flags & VTICE_CAP_PREEMPT_TIMER)
		out += printf_string("  %-26s TSC >> %u\n", "preemption timer rate",
				     caps.preempt_timer_shift);
	const std::pair<const char *, uint64_t> kRaw[] = {
		{"IA32_VMX_BASIC", caps.vmx_basic},
		{"pin-based controls", caps.pinbased_ctls},
		{"primary proc controls", caps.procbased_ctls},
		{"secondary proc controls", caps.procbased_ctls2},
		{"exit controls", caps.exit_ctls},
		{"entry controls", caps.entry_ctls},
		{"IA32_VMX_MISC", caps.misc},
		{"IA32_VMX_EPT_VPID_CAP", caps.ept_vpid_cap},
	};
	out += "raw MSRs\n";
	for (const auto &[name, value] : kRaw)
		out += printf_string("  %-26s 0x%016" PRIx64 "\n", name, value);
	return out;
}

}  // namespace vtice::console
