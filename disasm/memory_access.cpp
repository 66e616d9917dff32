// Effective addresses of an instruction's memory operands (SDM Vol. 1
// 3.7.5: base + index * scale + displacement, plus the segment base, which
// in 64-bit mode is non-zero only for fs and gs).
#include "memory_access.hpp"

#include <Zydis/Zydis.h>

namespace vtice {

namespace {

bool touches_no_memory(ZydisMnemonic mnemonic)
{
	switch (mnemonic) {
	case ZYDIS_MNEMONIC_LEA:
	case ZYDIS_MNEMONIC_NOP:
	case ZYDIS_MNEMONIC_PREFETCH:
	case ZYDIS_MNEMONIC_PREFETCHNTA:
	case ZYDIS_MNEMONIC_PREFETCHT0:
	case ZYDIS_MNEMONIC_PREFETCHT1:
	case ZYDIS_MNEMONIC_PREFETCHT2:
	case ZYDIS_MNEMONIC_PREFETCHW:
	case ZYDIS_MNEMONIC_CLFLUSH:
	case ZYDIS_MNEMONIC_CLFLUSHOPT:
	case ZYDIS_MNEMONIC_CLWB:
	case ZYDIS_MNEMONIC_INVLPG:
		return true;
	default:
		return false;
	}
}

std::optional<std::uint64_t> register_value(ZydisRegister reg, const RegisterSource &registers)
{
	if (reg == ZYDIS_REGISTER_NONE)
		return 0;
	ZydisRegister full = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
	const char *name = ZydisRegisterGetString(full);
	if (!name)
		return std::nullopt;
	auto value = registers(name);
	if (!value)
		return std::nullopt;
	unsigned width = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, reg);
	return width >= 64 ? *value : *value & ((std::uint64_t(1) << width) - 1);
}

std::optional<std::uint64_t> segment_base(ZydisRegister segment, const RegisterSource &registers)
{
	if (segment == ZYDIS_REGISTER_FS)
		return registers("fs_base");
	if (segment == ZYDIS_REGISTER_GS)
		return registers("gs_base");
	return 0;
}

std::optional<std::uint64_t> effective_address(const ZydisDecodedInstruction &insn, const ZydisDecodedOperand &op,
					       const Instruction &decoded, const RegisterSource &registers)
{
	std::optional<std::uint64_t> base = op.mem.base == ZYDIS_REGISTER_RIP
						    ? std::optional<std::uint64_t>(decoded.next())
						    : register_value(op.mem.base, registers);
	auto index = register_value(op.mem.index, registers);
	auto segment = segment_base(op.mem.segment, registers);
	if (!base || !index || !segment)
		return std::nullopt;
	std::uint64_t address = *base + *index * (op.mem.scale ? op.mem.scale : 1) +
				static_cast<std::uint64_t>(op.mem.disp.value);
	if (insn.address_width == 32)
		address &= 0xffffffffu;
	return *segment + address;
}

bool is_bit_test(ZydisMnemonic mnemonic)
{
	return mnemonic == ZYDIS_MNEMONIC_BT || mnemonic == ZYDIS_MNEMONIC_BTS || mnemonic == ZYDIS_MNEMONIC_BTR ||
	       mnemonic == ZYDIS_MNEMONIC_BTC;
}

// BT, BTS, BTR and BTC with a register offset address a bit string that
// starts at the memory operand: the CPU accesses the operand-sized word
// at EA + (operand bytes * (BitOffset DIV operand bits)), the offset signed
// (SDM Vol. 2A BT, "Bit(BitBase, BitOffset)" and the note on memory
// operands). An immediate offset is taken modulo the operand size instead.
std::optional<std::int64_t> bit_string_displacement(const ZydisDecodedInstruction &insn,
						    const ZydisDecodedOperand &offset, const RegisterSource &registers)
{
	if (!is_bit_test(insn.mnemonic) || offset.type != ZYDIS_OPERAND_TYPE_REGISTER)
		return 0;
	auto value = register_value(offset.reg.value, registers);
	if (!value)
		return std::nullopt;
	unsigned bits = insn.operand_width;  // 16, 32 or 64: the offset register has this width
	std::int64_t signed_offset = static_cast<std::int64_t>(*value << (64 - bits)) >> (64 - bits);
	std::int64_t words = signed_offset >> __builtin_ctz(bits);  // DIV rounding down, as the CPU does
	return words * static_cast<std::int64_t>(bits / 8);
}

bool saves_extended_state(ZydisMnemonic mnemonic)
{
	switch (mnemonic) {
	case ZYDIS_MNEMONIC_XSAVE:
	case ZYDIS_MNEMONIC_XSAVE64:
	case ZYDIS_MNEMONIC_XSAVEC:
	case ZYDIS_MNEMONIC_XSAVEC64:
	case ZYDIS_MNEMONIC_XSAVEOPT:
	case ZYDIS_MNEMONIC_XSAVEOPT64:
	case ZYDIS_MNEMONIC_XSAVES:
	case ZYDIS_MNEMONIC_XSAVES64:
		return true;
	default:
		return false;
	}
}

bool is_repeated_string(const ZydisDecodedInstruction &insn)
{
	constexpr ZydisInstructionAttributes rep = ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE;
	return (insn.attributes & rep) && insn.meta.category == ZYDIS_CATEGORY_STRINGOP;
}

}  // namespace

std::vector<MemoryAccess> memory_accesses(const Instruction &decoded, const RegisterSource &registers)
{
	ZydisDecoder decoder;
	ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	std::vector<MemoryAccess> out;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, decoded.bytes.data(), decoded.length, &insn, ops)) ||
	    touches_no_memory(insn.mnemonic))
		return out;
	// BT and kin: where the bit offset moves the operand (0 for every other instruction)
	auto bit_string = bit_string_displacement(insn, ops[1], registers);
	if (!bit_string)
		return out;
	bool repeated = is_repeated_string(insn);
	auto flags = registers("eflags");
	for (unsigned i = 0; i < insn.operand_count; i++) {
		const ZydisDecodedOperand &op = ops[i];
		if (op.type != ZYDIS_OPERAND_TYPE_MEMORY || op.mem.type != ZYDIS_MEMOP_TYPE_MEM || op.size == 0)
			continue;
		auto address = effective_address(insn, op, decoded, registers);
		if (!address)
			continue;
		*address += static_cast<std::uint64_t>(*bit_string);
		MemoryAccess access;
		access.size = op.size / 8;
		access.read = op.actions & (ZYDIS_OPERAND_ACTION_READ | ZYDIS_OPERAND_ACTION_CONDREAD);
		access.write = op.actions & (ZYDIS_OPERAND_ACTION_WRITE | ZYDIS_OPERAND_ACTION_CONDWRITE);
		// Zydis gives push, call, pushf and enter their stack operand as
		// [rsp]; they store below it (SDM Vol. 2B PUSH: RSP is decremented
		// first).
		bool pushes = op.visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN && op.mem.base == ZYDIS_REGISTER_RSP &&
			      access.write;
		access.address = pushes ? *address - access.size : *address;
		access.repeated = repeated;
		access.downwards = repeated && flags && (*flags & (1u << 10));
		access.extended_state = access.write && saves_extended_state(insn.mnemonic);
		if (access.read || access.write)
			out.push_back(access);
	}
	return out;
}

}  // namespace vtice
