#include "target.hpp"

#include <cstring>

namespace vtice::dbg {

const RegisterInfo *RegisterLayout::find(const std::string &name) const
{
	for (const auto &reg : registers)
		if (reg.name == name)
			return &reg;
	return nullptr;
}

const RegisterInfo *RegisterLayout::find_number(unsigned number) const
{
	for (const auto &reg : registers)
		if (reg.number == number)
			return &reg;
	return nullptr;
}

std::optional<std::uint64_t> RegisterValues::get(const RegisterInfo &reg) const
{
	unsigned bytes = (reg.bits + 7) / 8;
	if (reg.offset + bytes > raw.size() || bytes == 0)
		return std::nullopt;
	std::uint64_t value = 0;
	std::memcpy(&value, raw.data() + reg.offset, bytes < 8 ? bytes : 8);
	return value;
}

void RegisterValues::set(const RegisterInfo &reg, std::uint64_t value)
{
	unsigned bytes = (reg.bits + 7) / 8;
	if (raw.size() < reg.offset + bytes)
		raw.resize(reg.offset + bytes);
	std::memset(raw.data() + reg.offset, 0, bytes);
	std::memcpy(raw.data() + reg.offset, &value, bytes < 8 ? bytes : 8);
}

const char *break_kind_name(BreakKind kind)
{
	switch (kind) {
	case BreakKind::Software: return "breakpoint";
	case BreakKind::Hardware: return "hw breakpoint";
	case BreakKind::WriteWatch: return "watchpoint";
	case BreakKind::ReadWatch: return "read watchpoint";
	case BreakKind::AccessWatch: return "acc watchpoint";
	}
	return "?";
}

Result<void> Target::set_branch_trace(int, bool)
{
	return make_error(describe() + " records no branch trace itself");
}

Result<std::vector<vtice_record>> Target::read_branch_trace(int)
{
	return make_error(describe() + " records no branch trace itself");
}

namespace {
Error no_probes(const Target &t)
{
	return make_error(t.describe() + " arms no vtice probes (only the vtice hypervisor's stub does)");
}
}  // namespace

Result<void> Target::arm_probes(const vtice_probes &) { return no_probes(*this); }
Result<std::uint64_t> Target::disarm_probes() { return no_probes(*this); }
Result<std::uint64_t> Target::probe_hits() { return no_probes(*this); }
Result<std::vector<std::uint64_t>> Target::probe_counts(bool) { return no_probes(*this); }
Result<std::uint64_t> Target::probe_unreadable() { return no_probes(*this); }
Result<std::vector<std::uint64_t>> Target::probe_hist(std::uint32_t) { return no_probes(*this); }
Result<std::vector<vtice_probe_key>> Target::probe_keys(std::uint32_t) { return no_probes(*this); }
Result<std::uint64_t> Target::probe_passed_over() { return no_probes(*this); }
Result<std::uint64_t> Target::probes_removed() { return no_probes(*this); }
Result<void> Target::arm_syscalls(const vtice_syscalls &) { return no_probes(*this); }
Result<void> Target::disarm_syscalls() { return no_probes(*this); }
Result<SyscallTrapCounts> Target::syscall_counts() { return no_probes(*this); }
Result<void> Target::arm_profile(const vtice_profile &) { return no_probes(*this); }
Result<void> Target::disarm_profile() { return no_probes(*this); }
Result<ProfilerCounts> Target::profiler_counts() { return no_probes(*this); }
Result<std::vector<vtice_record>> Target::take_ring(int) { return no_probes(*this); }
Result<std::uint64_t> Target::tsc_khz() { return no_probes(*this); }

Result<void> Target::resume_with(std::span<const BreakpointChange> changes, ResumeAction action)
{
	for (const BreakpointChange &c : changes) {
		auto r = c.insert ? insert_breakpoint(c.type, c.address, c.kind)
				  : remove_breakpoint(c.type, c.address, c.kind);
		if (!r)
			return r;
	}
	return resume(action);
}

}  // namespace vtice::dbg
