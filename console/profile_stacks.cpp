// Unwinding a sample's copied kernel stack (profile_stacks.hpp).
#include "profile_stacks.hpp"

#include <cstring>

#include "kernel_address.hpp"
#include "trace/kcore.hpp"

namespace vtice::console {

namespace {

// Reads only what the hypervisor copied: [rsp, rsp + stack.size()).
symbols::MemoryReader copied_stack(const trace::ProfileSample &s)
{
	return [&s](std::uint64_t address, std::span<std::uint8_t> out) {
		if (address < s.rsp || address - s.rsp > s.stack.size() ||
		    out.size() > s.stack.size() - (address - s.rsp))
			return false;
		std::memcpy(out.data(), s.stack.data() + (address - s.rsp), out.size());
		return true;
	};
}

}  // namespace

SampleStack unwind_sample(const symbols::OrcTable *orc, const trace::ProfileSample &sample, std::size_t max_frames)
{
	SampleStack out;
	out.frames.push_back(sample.rip);
	if (!orc || sample.user)
		return out;
	symbols::MemoryReader read = copied_stack(sample);
	symbols::UnwindRegs regs{sample.rip, sample.rsp, sample.rbp, true};
	while (out.frames.size() < max_frames) {
		auto step = symbols::unwind_step(*orc, regs, read);
		if (!step) {
			out.truncated = true;
			return out;
		}
		// The entry code's end marker, or a pt_regs frame from user mode.
		if (step->end_of_stack || !dbg::is_kernel_address(step->caller.rip))
			return out;
		// A stack only grows down: a caller below its callee is a bad walk.
		if (step->caller.rsp <= regs.rsp) {
			out.truncated = true;
			return out;
		}
		regs = step->caller;
		out.frames.push_back(regs.rip);
	}
	out.truncated = true;
	return out;
}

Result<std::unique_ptr<symbols::OrcTable>> load_running_orc(const dbg::SymbolSource &symbols,
							     const std::string &kcore_path)
{
	symbols::SymbolTable names;
	for (const char *name : {"__start_orc_unwind_ip", "__stop_orc_unwind_ip", "__start_orc_unwind"}) {
		auto address = symbols.lookup(name);
		if (!address)
			return make_error(std::string(name) + " is not in the kernel's symbols (a kernel without ORC?)");
		names.add(*address, 'R', name);
	}
	names.finalize();
	auto kcore = dbg::Kcore::open(kcore_path);
	if (!kcore)
		return kcore.error();
	symbols::MemoryReader read = [&kcore](std::uint64_t address, std::span<std::uint8_t> out) {
		auto bytes = kcore->read(address, out.size());
		if (!bytes)
			return false;
		std::memcpy(out.data(), bytes->data(), out.size());
		return true;
	};
	auto table = symbols::OrcTable::load(names, read);
	if (!table)
		return table.error();
	return std::make_unique<symbols::OrcTable>(std::move(*table));
}

}  // namespace vtice::console
