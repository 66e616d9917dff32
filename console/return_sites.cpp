#include "return_sites.hpp"

#include "hex.hpp"

namespace vtice::console {

Result<ReturnSites> find_return_sites(std::span<const std::uint8_t> text, std::uint64_t start,
				      const Disassembler &disasm,
				      const std::function<bool(std::uint64_t)> &is_return_thunk)
{
	ReturnSites found;
	const std::uint64_t end = start + text.size();
	for (std::size_t off = 0; off < text.size();) {
		auto insn = disasm.decode(text.subspan(off), start + off);
		if (!insn)
			return make_error("cannot decode the instruction at +" + dbg::hex(off) + ": " + insn.error().message);
		if (insn->branch == BranchKind::Ret) {
			found.sites.push_back(insn->address);
		} else if (insn->branch == BranchKind::Jmp) {
			bool inside = insn->target && *insn->target >= start && *insn->target < end;
			if (insn->target && is_return_thunk(*insn->target))
				found.sites.push_back(insn->address);
			else if (!inside)
				found.tail_calls.push_back(insn->address);
		}
		off += insn->length;
	}
	return found;
}

}  // namespace vtice::console
