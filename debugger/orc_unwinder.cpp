#include "orc_unwinder.hpp"

#include <cstring>

#include "kernel_address.hpp"
#include "symbols/bytes.hpp"
#include "symbols/elf_image.hpp"
#include "symbols/loader.hpp"
#include "symbols/symbol_table.hpp"

namespace vtice::dbg {

namespace {

symbols::MemoryReader bytes_reader(const MemoryReader &read)
{
	return [&read](std::uint64_t address, std::span<std::uint8_t> out) {
		for (std::size_t done = 0; done < out.size(); done += 8) {
			auto word = read(address + done);
			if (!word)
				return false;
			std::memcpy(out.data() + done, &*word, std::min<std::size_t>(8, out.size() - done));
		}
		return true;
	};
}

}  // namespace

// A return address's call is the byte before it: a call that ends its
// function returns to the next function's first byte.
Result<const symbols::OrcTable *> OrcUnwinder::table_at(const symbols::UnwindRegs &r) const
{
	auto table = table_for(r.exact_ip ? r.rip : r.rip - 1);
	if (!table)
		return table.error();
	return *table ? *table : &table_;	// no module's: the kernel's says why not
}

Result<const symbols::OrcTable *> OrcUnwinder::table_for(std::uint64_t ip) const
{
	if (!modules_ || table_.covers(ip))
		return &table_;
	return modules_->table_for(ip);
}

Result<std::vector<Frame>> OrcUnwinder::unwind(const UnwindRegs &regs, const MemoryReader &read,
					       std::size_t max_frames) const
{
	symbols::MemoryReader reader = bytes_reader(read);
	symbols::UnwindRegs r{regs.ip, regs.sp, regs.bp, true};
	std::vector<Frame> frames{{r.rip, r.rsp, true, "orc"}};
	while (frames.size() < max_frames) {
		auto table = table_at(r);
		auto step = table ? symbols::unwind_step(**table, r, reader) : Result<symbols::UnwindStep>(table.error());
		if (!step) {
			if (frames.size() == 1)
				return step.error();
			frames.back().note += " (unwind stopped: " + step.error().message + ")";
			break;
		}
		// The entry code's end marker, or a pt_regs frame from user mode:
		// the kernel stack ends here.
		if (step->end_of_stack || !is_kernel_address(step->caller.rip))
			break;
		if (step->caller.exact_ip == false && step->caller.rsp <= r.rsp) {
			frames.back().note += " (unwind stopped: the stack went backwards)";
			break;
		}
		r = step->caller;
		frames.push_back({r.rip, r.rsp, true, r.exact_ip ? "regs" : "orc"});
	}
	return frames;
}

namespace {

// symbols/ finds the tables by name in its own table type; minus moves the
// session's run-time addresses back to link time.
Result<symbols::SymbolTable> orc_table_names(const Session &session, std::uint64_t minus)
{
	const SymbolSource *symbols = session.symbols();
	if (!symbols)
		return make_error("no symbols to find the ORC tables");
	symbols::SymbolTable names;
	for (const char *name : {"__start_orc_unwind_ip", "__stop_orc_unwind_ip", "__start_orc_unwind"}) {
		auto address = symbols->lookup(name);
		if (!address)
			return make_error(std::string(name) + " is not in the symbols");
		names.add(*address - minus, 'R', name);
	}
	names.finalize();
	return names;
}

}  // namespace

Result<std::unique_ptr<OrcUnwinder>> load_orc_from_image(Session &session, const std::string &path)
{
	std::int64_t slide = session.kaslr_slide().value_or(0);
	auto names = orc_table_names(session, static_cast<std::uint64_t>(slide));
	if (!names)
		return names.error();
	auto loaded = symbols::load_symbols(path);  // a vmlinux, or a vmlinuz inflated
	if (!loaded)
		return loaded.error();
	if (!loaded->image)
		return make_error(path + " is not a kernel image (vmlinux or vmlinuz)");
	auto table = symbols::OrcTable::load(*names, *loaded->image);
	if (!table)
		return table.error();
	table->rebase(slide);
	return std::make_unique<OrcUnwinder>(std::move(*table));
}

Result<std::unique_ptr<OrcUnwinder>> load_orc_from_guest(Session &session)
{
	auto names = orc_table_names(session, 0);
	if (!names)
		return names.error();
	auto table = symbols::OrcTable::load(*names, session.memory_reader());
	if (!table)
		return table.error();
	return std::make_unique<OrcUnwinder>(std::move(*table));
}

}  // namespace vtice::dbg
