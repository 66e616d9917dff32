#include "replay_orc.hpp"

#include <cstring>
#include <map>

#include "hex.hpp"
#include "symbols/loader.hpp"
#include "symbols/orc.hpp"

namespace vtice::console {

namespace {

struct SlideVote {
	std::int64_t slide = 0;
	std::size_t agreeing = 0;  // functions whose two addresses differ by slide
	std::size_t found = 0;     // recorded functions the vmlinux has at all
};

// The slide most recorded functions agree on (run-time minus link-time address).
SlideVote common_slide(const symbols::SymbolTable &linked, const std::vector<trace::TraceSymbol> &recorded)
{
	std::map<std::int64_t, std::size_t> votes;
	SlideVote best;
	for (const auto &symbol : recorded)
		if (const symbols::Symbol *at_link = linked.find(symbol.name)) {
			++votes[static_cast<std::int64_t>(symbol.address - at_link->address)];
			++best.found;
		}
	for (const auto &[slide, count] : votes)
		if (count > best.agreeing) {
			best.slide = slide;
			best.agreeing = count;
		}
	return best;
}

}  // namespace

Result<ReplayOrc> load_replay_orc(const std::string &vmlinux, const std::vector<trace::TraceSymbol> &recorded)
{
	auto loaded = symbols::load_symbols(vmlinux);
	if (!loaded)
		return loaded.error();
	if (!loaded->image)
		return make_error(vmlinux + " is not a kernel image (vmlinux or vmlinuz): no ORC tables in it");
	SlideVote vote = common_slide(*loaded->table, recorded);
	// One KASLR slide moves the whole kernel: another build of it moves
	// functions by different amounts, and most of them must agree.
	if (vote.agreeing * 2 <= vote.found || vote.found == 0)
		return make_error(vmlinux + " is not the kernel that was recorded: of the recording's " +
				  std::to_string(recorded.size()) + " functions " + std::to_string(vote.found) +
				  " are in it, and at most " + std::to_string(vote.agreeing) +
				  " lie one slide away from where it puts them");
	auto table = symbols::OrcTable::load(*loaded->table, *loaded->image);
	if (!table)
		return make_error(vmlinux + ": " + table.error().message);
	table->rebase(vote.slide);
	loaded->table->set_slide(vote.slide);
	return ReplayOrc{std::make_unique<dbg::OrcUnwinder>(std::move(*table)), symbols::make_symbolizer(loaded->table),
			 vote.slide, vote.agreeing};
}

Result<std::vector<dbg::Frame>> unwind_replay(const ReplayOrc &orc, const replay::Replay &replay,
					       std::size_t max_frames)
{
	std::size_t k = replay.position();
	auto reg = [&replay](const char *name) { return replay.reg(name).value_or(0); };
	dbg::UnwindRegs regs;
	regs.ip = replay.pc_at(k);
	regs.sp = reg("rsp");
	regs.bp = reg("rbp");
	dbg::MemoryReader read = [&replay, k](std::uint64_t address) -> Result<std::uint64_t> {
		auto bytes = replay.read_at(address, 8, k);
		if (bytes.size() < 8)
			return make_error("the recording never saw the stack at " + dbg::hex(address));
		std::uint64_t word = 0;
		std::memcpy(&word, bytes.data(), 8);
		return word;
	};
	return orc.unwinder->unwind(regs, read, max_frames);
}

}  // namespace vtice::console
