// Unwinding a sample's copied kernel stack (profile_stacks.hpp).
#include "profile_stacks.hpp"

#include <cstring>

#include "kernel_address.hpp"

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

SampleStack unwind_sample(const symbols::OrcTables *orc, const trace::ProfileSample &sample, std::size_t max_frames)
{
	if (!orc)
		return unwind_sample(OrcLookup(), sample, max_frames);
	return unwind_sample([orc](std::uint64_t ip) { return orc->for_ip(ip); }, sample, max_frames);
}

SampleStack unwind_sample(const OrcLookup &table_for, const trace::ProfileSample &sample, std::size_t max_frames)
{
	SampleStack out;
	out.frames.push_back(sample.rip);
	if (!table_for || sample.user)
		return out;
	symbols::MemoryReader read = copied_stack(sample);
	symbols::UnwindRegs regs{sample.rip, sample.rsp, sample.rbp, true};
	while (out.frames.size() < max_frames) {
		const symbols::OrcTable *table = table_for(regs.exact_ip ? regs.rip : regs.rip - 1);
		if (!table) {
			out.truncated = true;	// text no table covers: a module whose tables were not read
			return out;
		}
		auto step = symbols::unwind_step(*table, regs, read);
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

Result<std::unique_ptr<RunningOrc>> RunningOrc::load(const dbg::SymbolSource &symbols, const std::string &kcore_path,
						     KernelBtf &btf)
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
	auto kernel = symbols::OrcTable::load(names, kcore->reader());
	if (!kernel)
		return kernel.error();
	std::unique_ptr<RunningOrc> orc(new RunningOrc(std::move(*kcore), std::move(*kernel)));
	auto types = btf.types();
	auto layout = types ? module_orc_layout(**types) : Result<ModuleOrcLayout>(types.error());
	if (layout)
		orc->layout_ = *layout;
	else
		orc->warnings_.push_back("modules' stacks end at their first frame: " + layout.error().to_string());
	orc->reload_modules();
	if (!orc->skipped_.empty())
		orc->warnings_.push_back(std::to_string(orc->skipped_.size()) + " module" +
					 (orc->skipped_.size() == 1 ? "'s" : "s'") +
					 " stacks end at their first frame: " + orc->skipped_[0] +
					 (orc->skipped_.size() > 1 ? " (and others)" : ""));
	return orc;
}

symbols::MemoryReader RunningOrc::reader() const
{
	return kcore_.reader();
}

void RunningOrc::reload_modules()
{
	if (!layout_)
		return;
	ModuleOrcs modules = load_module_orcs(*layout_, reader(), tables_.kernel());
	tables_.set_modules(std::move(modules.tables));
	skipped_ = std::move(modules.skipped);
}

}  // namespace vtice::console
