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

namespace {

std::string lbr_address(std::uint64_t address, const Symbolizer &symbolize)
{
	std::string text = printf_string("0x%016" PRIx64, address);
	auto hit = symbolize ? symbolize(address) : std::nullopt;
	if (hit)
		text += " <" + printable_symbol(hit->name) + printf_string("+0x%" PRIx64 ">", hit->offset);
	return text;
}

const char *lbr_event_name(unsigned event)
{
	switch (event) {
	case VTICE_LBR_EV_OOPS: return "oops";
	case VTICE_LBR_EV_PANIC: return "panic";
	case VTICE_LBR_EV_TRIPLE_FAULT: return "triple fault";
	case VTICE_LBR_EV_LOCKUP: return "hard lockup";
	case VTICE_LBR_EV_PARKED: return "stopped while another CPU crashed";
	default: return nullptr;
	}
}

std::string lbr_flags_text(const vtice_lbr_entry &e)
{
	std::string text;
	if (e.flags & VTICE_LBR_MISPRED)
		text += " mispredicted";
	if (e.flags & VTICE_LBR_IN_TSX)
		text += " in-tsx";
	if (e.flags & VTICE_LBR_TSX_ABORT)
		text += " tsx-abort";
	if (e.flags & VTICE_LBR_CYCLES)
		text += printf_string(" %u cycles", e.cycles);
	return text.empty() ? text : "  [" + text.substr(1) + "]";
}

}  // namespace

std::string lbr_status_text(const vtice_lbr &lbr)
{
	switch (lbr.status) {
	case VTICE_LBR_OK: return "";
	case VTICE_LBR_NO_DEBUGCTL:
		return "this CPU has no LBR (DEBUGCTL.LBR does not stick: an emulated CPU such as Bochs "
		       "or QEMU TCG)";
	case VTICE_LBR_NOT_INTEL: return "this CPU has no LBR that vtice reads (not an Intel CPU)";
	case VTICE_LBR_UNKNOWN_MODEL:
		return printf_string("this CPU has no LBR that vtice reads (model %02X_%02XH: its LBR MSRs "
				     "are not in vtice's table)", lbr.model >> 8, lbr.model & 0xff);
	case VTICE_LBR_ARCH_ONLY:
		return printf_string("this CPU has architectural LBR (depth %u, CPUID leaf 0x1C), which "
				     "vtice does not read yet", lbr.arch_depth);
	case VTICE_LBR_NO_STUB:
		return "LBR is there, but snapshots are taken by the debug stub: load vtice.ko with "
		       "debug_port= (and crash_stop=1)";
	case VTICE_LBR_OFFLINE: return "not virtualized (offline?)";
	default: return printf_string("unknown status %u", lbr.status);
	}
}

std::string format_lbr(const vtice_lbr &lbr, const Symbolizer &symbolize)
{
	std::string out = printf_string("cpu %u: ", lbr.cpu);
	if (lbr.status != VTICE_LBR_OK)
		return out + lbr_status_text(lbr) + "\n";
	const char *event = lbr_event_name(lbr.event);
	if (!event)
		return out + printf_string("no snapshot yet (LBR: %u entries, format %u)\n", lbr.entries,
					   lbr.format);
	out += printf_string("%s at %s, %u branches, oldest first", event,
			     lbr_address(lbr.rip, symbolize).c_str(), lbr.count);
	if (lbr.snapshots > 1)
		out += printf_string(" (the last of %u snapshots)", lbr.snapshots);
	out += "\n";
	if (lbr.flags & VTICE_LBR_GUEST_OWNED)
		out += printf_string("  the kernel was using LBR itself (perf): its LBR_SELECT 0x%" PRIx64
				     " filtered what was kept\n", (std::uint64_t)lbr.lbr_select);
	for (unsigned i = 0; i < lbr.count && i < VTICE_LBR_MAX; i++)
		out += "  " + lbr_address(lbr.br[i].from, symbolize) + " -> " +
		       lbr_address(lbr.br[i].to, symbolize) + lbr_flags_text(lbr.br[i]) + "\n";
	return out;
}

}  // namespace vtice::console
