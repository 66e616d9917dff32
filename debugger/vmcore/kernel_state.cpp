#include "kernel_state.hpp"

#include "notes.hpp"
#include "symbols/bytes.hpp"

namespace vtice::dbg::vmcore {

namespace {

// arch/x86/include/asm/page_64_types.h: where the kernel image is mapped.
constexpr std::uint64_t kStartKernelMap = 0xffffffff80000000ull;
constexpr std::uint64_t kPage = 4096;

Result<std::uint64_t> read_u64(Session &session, std::uint64_t address)
{
	auto bytes = session.read_memory(address, 8);
	if (!bytes)
		return bytes.error();
	return symbols::load_le<std::uint64_t>(bytes->data());
}

// The pid of the task running on CPU `cpu`: its per-CPU current_task (in
// struct pcpu_hot since 6.2), at __per_cpu_offset[cpu]. drgn pairs a
// running task with its PRSTATUS by this pid, as kdump writes it. Nothing
// when a symbol or type is missing.
std::optional<std::int32_t> current_pid(Session &session, const btf::Types &types, unsigned cpu)
{
	std::uint64_t field_offset = 0;
	auto variable = session.resolve_location("pcpu_hot");
	if (variable) {
		auto hot = types.find("struct pcpu_hot");
		auto member = hot ? types.member(*hot, "current_task") : Result<btf::Member>(hot.error());
		if (!member)
			return std::nullopt;
		field_offset = member->bit_offset / 8;
	} else {
		variable = session.resolve_location("current_task");
	}
	if (!variable)
		return std::nullopt;
	// Per-CPU symbols are offsets into the per-CPU area (x86-64's zero-based
	// per-CPU layout); a symbol file's slide does not apply to them.
	std::uint64_t offset = *variable;
	if (offset >= (1ull << 32) && session.kaslr_slide())
		offset -= static_cast<std::uint64_t>(*session.kaslr_slide());
	auto offsets = session.resolve_location("__per_cpu_offset");
	auto task_type = types.find("struct task_struct");
	auto pid = task_type ? types.member(*task_type, "pid") : Result<btf::Member>(task_type.error());
	if (offset >= (1ull << 32) || !offsets || !pid || pid->size != 4)
		return std::nullopt;
	auto base = read_u64(session, *offsets + 8ull * cpu);
	auto task = base ? read_u64(session, *base + offset + field_offset) : base;
	auto bytes = task ? session.read_memory(*task + pid->bit_offset / 8, 4) : Result<std::vector<std::uint8_t>>(task.error());
	if (!bytes)
		return std::nullopt;
	return symbols::load_le<std::int32_t>(bytes->data());
}

}  // namespace

Result<std::uint64_t> read_symbol_u64(Session &session, const char *name)
{
	auto address = session.resolve_location(name);
	if (!address)
		return make_error(std::string("no symbol ") + name + ": " + address.error().message);
	auto v = read_u64(session, *address);
	if (!v)
		return make_error(std::string("reading ") + name + ": " + v.error().message);
	return v;
}

Result<std::string> read_vmcoreinfo(Session &session)
{
	auto data = read_symbol_u64(session, "vmcoreinfo_data");
	if (!data)
		return make_error(data.error().message + " (a kernel without CONFIG_CRASH_CORE has no vmcoreinfo)");
	auto size = read_symbol_u64(session, "vmcoreinfo_size");
	if (!size)
		return size.error();
	if (*size == 0 || *size > 4096 || *data == 0)
		return make_error("the kernel's vmcoreinfo is not set up (size " + std::to_string(*size) + ")");
	auto bytes = session.read_memory(*data, static_cast<std::size_t>(*size));
	if (!bytes)
		return make_error("reading the kernel's vmcoreinfo: " + bytes.error().message);
	std::string text(bytes->begin(), bytes->end());
	if (auto r = check_vmcoreinfo(text); !r)
		return r.error();
	return text;
}

Result<std::vector<std::uint8_t>> cpu_notes(Session &session, const btf::Types &types, unsigned &cpus)
{
	Target &target = session.target();
	auto threads = target.threads();
	if (!threads)
		return threads.error();
	int selected = target.selected_thread();
	std::vector<std::uint8_t> notes;
	std::vector<std::int32_t> pids;
	for (std::size_t cpu = 0; cpu < threads->size(); ++cpu)
		pids.push_back(current_pid(session, types, static_cast<unsigned>(cpu)).value_or(0));
	for (std::size_t cpu = 0; cpu < threads->size(); ++cpu) {
		int thread = (*threads)[cpu];
		if (auto r = target.select_thread(thread); !r)
			return r.error();
		auto values = target.read_registers();
		if (!values)
			return make_error("registers of thread " + std::to_string(thread) + ": " + values.error().message);
		PrstatusRegisters regs{};
		for (std::size_t i = 0; i < kPrstatusRegisters.size(); ++i) {
			const RegisterInfo *info = target.layout().find(kPrstatusRegisters[i]);
			regs[i] = info ? values->get(*info).value_or(0) : 0;
		}
		regs[15] = ~0ull;  // orig_rax
		auto note = prstatus_note(regs, pids[cpu]);
		notes.insert(notes.end(), note.begin(), note.end());
	}
	cpus = static_cast<unsigned>(threads->size());
	if (selected > 0)
		(void)target.select_thread(selected);
	session.invalidate_registers();
	return notes;
}

// Its physical address is __pa_symbol(): vaddr - __START_KERNEL_map + phys_base.
std::optional<RamRange> kernel_image(Session &session)
{
	auto text = session.resolve_location("_text"), etext = session.resolve_location("_end");
	auto phys_base = read_symbol_u64(session, "phys_base");
	if (!text || !etext || !phys_base || *etext <= *text || *text < kStartKernelMap)
		return std::nullopt;
	std::uint64_t start = *text / kPage * kPage, end = (*etext + kPage - 1) / kPage * kPage;
	return RamRange{start - kStartKernelMap + *phys_base, start, end - start};
}

}  // namespace vtice::dbg::vmcore
