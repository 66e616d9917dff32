#include "insn_boundary.hpp"

#include "hex.hpp"

namespace vtice::console {

Result<void> check_instruction_start(std::span<const std::uint8_t> text, std::uint64_t start,
				     std::uint64_t address, const Disassembler &disasm)
{
	std::uint64_t at = start;
	while (at < address) {
		if (at - start >= text.size())
			return make_error("past the end of the bytes read");
		auto insn = disasm.decode(text.subspan(at - start), at);
		if (!insn)
			return make_error("cannot decode the instruction at +" + dbg::hex(at - start) + ": " +
					  insn.error().message);
		if (at + insn->length > address)
			return make_error("+" + dbg::hex(address - start) + " is inside an instruction: instructions "
					  "start at +" + dbg::hex(at - start) + " and +" +
					  dbg::hex(at + insn->length - start));
		at += insn->length;
	}
	return {};
}

}  // namespace vtice::console
