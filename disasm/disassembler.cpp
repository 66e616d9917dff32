// Zydis 4 behind vtice::Disassembler. Decoding classifies branches once, so
// the trace decoder never looks at Zydis types; formatting re-decodes the
// saved bytes, which keeps Instruction a plain value.
#include "disassembler.hpp"

#include <Zycore/Format.h>
#include <Zydis/Zydis.h>

#include <cstdio>
#include <cstring>

namespace vtice {

namespace {

struct DecodedFull {
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
};

BranchKind kind_of(const ZydisDecodedInstruction &insn)
{
	switch (insn.mnemonic) {
	case ZYDIS_MNEMONIC_CALL: return BranchKind::Call;
	case ZYDIS_MNEMONIC_RET: return BranchKind::Ret;
	case ZYDIS_MNEMONIC_JMP: return BranchKind::Jmp;
	case ZYDIS_MNEMONIC_JCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE: return BranchKind::Jcc;
	case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSENTER: return BranchKind::Syscall;
	case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_SYSEXIT: return BranchKind::Sysret;
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INTO: return BranchKind::Int;
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ: return BranchKind::Iret;
	default: break;
	}
	return insn.meta.category == ZYDIS_CATEGORY_COND_BR ? BranchKind::Jcc : BranchKind::None;
}

// The instructions a TF-stepping tracer cannot let run inside a branch step
// (hypervisor/debug/insn.h names them the same way, checked against Zydis).
bool is_tf_hazard(const ZydisDecodedInstruction &insn)
{
	switch (insn.mnemonic) {
	case ZYDIS_MNEMONIC_PUSHF:
	case ZYDIS_MNEMONIC_PUSHFD:
	case ZYDIS_MNEMONIC_PUSHFQ:
	case ZYDIS_MNEMONIC_POPF:
	case ZYDIS_MNEMONIC_POPFD:
	case ZYDIS_MNEMONIC_POPFQ:
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_HLT:
	case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_SYSENTER:
	case ZYDIS_MNEMONIC_SYSEXIT:
		return true;
	case ZYDIS_MNEMONIC_MOV:
		return insn.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && insn.opcode == 0x8e && insn.raw.modrm.reg == 2;
	default:
		return false;
	}
}

// Fills target/indirect: a relative immediate is a direct target; anything
// else (register, memory, the stack for ret, an MSR or the IDT) is indirect.
void classify_target(const DecodedFull &d, Instruction &out)
{
	if (out.branch == BranchKind::None)
		return;
	const ZydisDecodedOperand *first = d.insn.operand_count_visible ? &d.operands[0] : nullptr;
	if (first && first->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && first->imm.is_relative) {
		ZyanU64 target = 0;
		if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&d.insn, first, out.address, &target)))
			out.target = target;
		return;
	}
	out.indirect = true;
}

void find_rip_relative(const DecodedFull &d, Instruction &out)
{
	for (unsigned i = 0; i < d.insn.operand_count_visible; i++) {
		const ZydisDecodedOperand &op = d.operands[i];
		if (op.type != ZYDIS_OPERAND_TYPE_MEMORY || op.mem.base != ZYDIS_REGISTER_RIP)
			continue;
		ZyanU64 address = 0;
		if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&d.insn, &op, out.address, &address)))
			out.rip_relative = address;
		return;
	}
}

std::string hex(std::uint64_t value)
{
	char text[24];
	std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
	return text;
}

}  // namespace

const char *branch_kind_name(BranchKind kind)
{
	switch (kind) {
	case BranchKind::None: return "none";
	case BranchKind::Call: return "call";
	case BranchKind::Ret: return "ret";
	case BranchKind::Jmp: return "jmp";
	case BranchKind::Jcc: return "jcc";
	case BranchKind::Syscall: return "syscall";
	case BranchKind::Sysret: return "sysret";
	case BranchKind::Int: return "int";
	case BranchKind::Iret: return "iret";
	}
	return "?";
}

struct Disassembler::Impl {
	ZydisDecoder decoder;
	ZydisFormatter formatter;
	Syntax syntax;
	ZydisFormatterFunc print_address_abs = nullptr;  // Zydis's own, for unresolved targets

	Result<DecodedFull> decode_full(std::span<const std::uint8_t> code, std::uint64_t address) const;
};

// Branch targets are printed by this hook so a symbolizer can name them.
// RIP-relative memory stays "[rip+disp]" (FORCE_RELATIVE_RIPREL) and gets
// its symbol as a trailing comment instead, the way objdump does it.
struct FormatContext {
	const Disassembler::Impl *impl;
	const Symbolizer *symbolize;
};

static ZyanStatus print_address_abs(const ZydisFormatter *formatter, ZydisFormatterBuffer *buffer,
				    ZydisFormatterContext *context)
{
	auto *fc = static_cast<FormatContext *>(context->user_data);
	ZyanU64 address = 0;
	bool have = ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(context->instruction, context->operand,
							   context->runtime_address, &address));
	std::optional<SymbolHit> hit;
	if (have && fc && fc->symbolize && *fc->symbolize)
		hit = (*fc->symbolize)(address);
	if (!hit)
		return fc->impl->print_address_abs(formatter, buffer, context);
	ZYAN_CHECK(ZydisFormatterBufferAppend(buffer, ZYDIS_TOKEN_SYMBOL));
	ZyanString *string = nullptr;
	ZYAN_CHECK(ZydisFormatterBufferGetString(buffer, &string));
	std::string text = format_address(address, *fc->symbolize);
	return ZyanStringAppendFormat(string, "%s", text.c_str());
}

Disassembler::Disassembler(Syntax syntax) : impl_(std::make_unique<Impl>())
{
	impl_->syntax = syntax;
	ZydisDecoderInit(&impl_->decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisFormatterInit(&impl_->formatter, syntax == Syntax::Att ? ZYDIS_FORMATTER_STYLE_ATT
								  : ZYDIS_FORMATTER_STYLE_INTEL);
	// objdump-like numbers: lower-case hex, no zero padding.
	ZydisFormatterSetProperty(&impl_->formatter, ZYDIS_FORMATTER_PROP_FORCE_RELATIVE_RIPREL, ZYAN_TRUE);
	ZydisFormatterSetProperty(&impl_->formatter, ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, ZYAN_FALSE);
	// Intel always names the memory operand size ("qword ptr") like objdump;
	// AT&T only needs a suffix when no register fixes the size.
	ZydisFormatterSetProperty(&impl_->formatter, ZYDIS_FORMATTER_PROP_FORCE_SIZE,
				  syntax == Syntax::Intel ? ZYAN_TRUE : ZYAN_FALSE);
	ZydisFormatterSetProperty(&impl_->formatter, ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE,
				  ZYDIS_PADDING_DISABLED);
	ZydisFormatterSetProperty(&impl_->formatter, ZYDIS_FORMATTER_PROP_ADDR_PADDING_RELATIVE,
				  ZYDIS_PADDING_DISABLED);
	ZydisFormatterSetProperty(&impl_->formatter, ZYDIS_FORMATTER_PROP_DISP_PADDING, ZYDIS_PADDING_DISABLED);
	ZydisFormatterSetProperty(&impl_->formatter, ZYDIS_FORMATTER_PROP_IMM_PADDING, ZYDIS_PADDING_DISABLED);
	// SetHook swaps in our function and hands back Zydis's own through the pointer.
	const void *hook = reinterpret_cast<const void *>(&print_address_abs);
	ZydisFormatterSetHook(&impl_->formatter, ZYDIS_FORMATTER_FUNC_PRINT_ADDRESS_ABS, &hook);
	impl_->print_address_abs = reinterpret_cast<ZydisFormatterFunc>(const_cast<void *>(hook));
}

Disassembler::~Disassembler() = default;

Result<DecodedFull> Disassembler::Impl::decode_full(std::span<const std::uint8_t> code,
						     std::uint64_t address) const
{
	DecodedFull d;
	ZyanStatus status = ZydisDecoderDecodeFull(&decoder, code.data(), code.size(), &d.insn, d.operands);
	if (ZYAN_SUCCESS(status))
		return d;
	if (status == ZYDIS_STATUS_NO_MORE_DATA)
		return make_error("truncated instruction at " + hex(address) + " (" +
				  std::to_string(code.size()) + " byte(s) available)");
	return make_error("invalid instruction at " + hex(address));
}

Result<Instruction> Disassembler::decode(std::span<const std::uint8_t> code, std::uint64_t address) const
{
	auto d = impl_->decode_full(code, address);
	if (!d)
		return d.error();
	Instruction out;
	out.address = address;
	out.length = d->insn.length;
	std::memcpy(out.bytes.data(), code.data(), out.length);
	out.branch = kind_of(d->insn);
	out.tf_hazard = is_tf_hazard(d->insn);
	classify_target(*d, out);
	find_rip_relative(*d, out);
	return out;
}

std::string Disassembler::format(const Instruction &insn, const Symbolizer &symbolize) const
{
	auto d = impl_->decode_full(std::span(insn.bytes.data(), insn.length), insn.address);
	if (!d)
		return "(bad)";
	FormatContext fc{impl_.get(), &symbolize};
	char text[256];
	if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&impl_->formatter, &d->insn, d->operands,
							  d->insn.operand_count_visible, text, sizeof(text),
							  insn.address, &fc)))
		return "(bad)";
	std::string out = text;
	// AT&T marks an indirect call/jmp operand with '*'; Zydis 4 leaves it out.
	bool call_or_jmp = insn.branch == BranchKind::Call || insn.branch == BranchKind::Jmp;
	size_t space = out.find(' ');
	if (impl_->syntax == Syntax::Att && insn.indirect && call_or_jmp && space != std::string::npos)
		out.insert(space + 1, "*");
	if (insn.rip_relative) {
		out += impl_->syntax == Syntax::Att ? "  # " : "  ; ";
		out += hex(*insn.rip_relative);
		std::optional<SymbolHit> hit = symbolize ? symbolize(*insn.rip_relative) : std::nullopt;
		if (hit)
			out += " <" + format_address(*insn.rip_relative, symbolize) + ">";
	}
	return out;
}

}  // namespace vtice
