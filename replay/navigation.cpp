#include "navigation.hpp"

#include <cstring>

namespace vtice::replay {

namespace {

std::uint64_t le64_at(const std::vector<std::uint8_t> &bytes, std::size_t offset)
{
	std::uint64_t v = 0;
	for (std::size_t i = 0; i < 8 && offset + i < bytes.size(); i++)
		v |= static_cast<std::uint64_t>(bytes[offset + i]) << (8 * i);
	return v;
}

}  // namespace

// A step that delivered an interrupt or exception keeps the frame the CPU
// pushed (SDM Vol. 3A 6.14.2: RIP, CS, RFLAGS, RSP, SS, after an error
// code for some vectors). When its saved RIP is the step's own instruction,
// the event came before that instruction ran: an interrupt let in at the VM
// entry, or a fault. (After it, a trap's frame holds where it went.)
bool Navigator::interrupted_before(std::size_t j) const
{
	std::uint64_t pc = replay_.pc_at(j);
	for (const MemoryEvent &event : replay_.recording().steps[j].memory)
		if (event.kind == AccessKind::WriteUnknownOld &&
		    (le64_at(event.after, 0) == pc || le64_at(event.after, 8) == pc))
			return true;
	return false;
}

Navigator::Navigator(Replay &replay, const Disassembler &disassembler)
	: replay_(replay), disassembler_(disassembler)
{
	depth_.assign(replay_.steps() + 1, 0);
	for (std::size_t j = 0; j < replay_.steps(); j++) {
		int d = depth_[j];
		auto insn = instruction(j);
		bool ran = replay_.pc_at(j + 1) != replay_.pc_at(j) && !interrupted_before(j);
		// A call that was taken enters a frame; a ret leaves one. A
		// stepped REP iteration stays where it is.
		if (insn && ran && insn->branch == BranchKind::Call)
			d++;
		else if (insn && ran && insn->branch == BranchKind::Ret)
			d--;
		depth_[j + 1] = d;
	}
}

std::optional<Instruction> Navigator::instruction(std::size_t position) const
{
	std::uint64_t pc = replay_.pc_at(position);
	auto bytes = replay_.read_at(pc, 15, position);
	if (bytes.empty())
		return std::nullopt;
	auto insn = disassembler_.decode(bytes, pc);
	if (!insn)
		return std::nullopt;
	return *insn;
}

std::size_t Navigator::finish(std::size_t from) const
{
	for (std::size_t p = from + 1; p <= replay_.steps(); p++)
		if (depth_[p] < depth_[from])
			return p;
	return replay_.steps();
}

std::size_t Navigator::reverse_finish(std::size_t from) const
{
	for (std::size_t p = from; p-- > 0;)
		if (depth_[p] < depth_[from])
			return p;
	return 0;
}

std::size_t Navigator::next(std::size_t from) const
{
	for (std::size_t p = from + 1; p <= replay_.steps(); p++)
		if (depth_[p] <= depth_[from])
			return p;
	return replay_.steps();
}

std::size_t Navigator::reverse_next(std::size_t from) const
{
	for (std::size_t p = from; p-- > 0;)
		if (depth_[p] <= depth_[from])
			return p;
	return 0;
}

std::vector<std::size_t> Navigator::call_stack(std::size_t position) const
{
	std::vector<std::size_t> out;
	for (std::size_t p = position; p > 0;) {
		std::size_t call = reverse_finish(p);
		if (depth_[call] >= depth_[p])
			break;  // the recording began inside this frame
		out.push_back(call);
		p = call;
	}
	return out;
}

std::optional<std::size_t> Navigator::find_pc(std::uint64_t address, std::size_t from, bool forward) const
{
	if (forward) {
		for (std::size_t p = from + 1; p <= replay_.steps(); p++)
			if (replay_.pc_at(p) == address)
				return p;
	} else {
		for (std::size_t p = from; p-- > 0;)
			if (replay_.pc_at(p) == address)
				return p;
	}
	return std::nullopt;
}

std::optional<std::size_t> Navigator::find_register(const std::string &name, std::uint64_t value, std::size_t from,
						     bool forward)
{
	if (replay_.register_index(name) < 0)
		return std::nullopt;
	std::size_t saved = replay_.position();
	std::optional<std::size_t> found;
	// p is a match when the register holds value there but not one step before.
	auto scan = [&](std::size_t first, std::size_t end, bool keep_last) {
		replay_.seek(first ? first - 1 : 0);
		bool before = first && replay_.reg(name) == value;
		for (std::size_t p = first; p < end; p++) {
			replay_.seek(p);
			bool now = replay_.reg(name) == value;
			if (now && !before) {
				found = p;
				if (!keep_last)
					return;
			}
			before = now;
		}
	};
	if (forward) {
		scan(from + 1, replay_.steps() + 1, false);
	} else {
		// Backwards a block at a time, each walked forwards from its
		// checkpoint, so no position is reached by a seek of its own.
		constexpr std::size_t kBlock = 1024;
		for (std::size_t end = from; end > 0 && !found;) {
			std::size_t first = (end - 1) / kBlock * kBlock;
			scan(first, end, true);
			end = first;
		}
	}
	replay_.seek(saved);
	return found;
}

}  // namespace vtice::replay
