#include "symbols/kaslr.hpp"

#include <cstdio>

namespace vtice::symbols {

namespace {

constexpr std::uint8_t kGatePresent = 0x80;
constexpr std::uint8_t kInterruptGate = 0xe;
constexpr std::uint8_t kTrapGate = 0xf;

// Exception vectors and the entry stub each points at (arch/x86/kernel/idt.c).
struct ExpectedGate {
	unsigned vector;
	const char *handler;
};
constexpr ExpectedGate kGates[] = {
	{0, "asm_exc_divide_error"}, {3, "asm_exc_int3"}, {6, "asm_exc_invalid_op"},
	{13, "asm_exc_general_protection"}, {14, "asm_exc_page_fault"},
};

std::string hex(std::int64_t value)
{
	char text[32];
	std::snprintf(text, sizeof(text), "%s0x%llx", value < 0 ? "-" : "",
		      static_cast<unsigned long long>(value < 0 ? -static_cast<std::uint64_t>(value) : value));
	return text;
}

}  // namespace

std::optional<std::uint64_t> idt_gate_handler(ByteSpan gate)
{
	if (gate.size() < kIdtGateSize)
		return std::nullopt;
	std::uint8_t attributes = gate[5];
	std::uint8_t type = attributes & 0xf;
	if (!(attributes & kGatePresent) || (type != kInterruptGate && type != kTrapGate))
		return std::nullopt;
	std::uint64_t low = *read_le<std::uint16_t>(gate, 0);
	std::uint64_t middle = *read_le<std::uint16_t>(gate, 6);
	std::uint64_t high = *read_le<std::uint32_t>(gate, 8);
	return low | middle << 16 | high << 32;
}

Result<std::int64_t> kaslr_slide_from_idt(const SymbolTable &symbols, ByteSpan idt)
{
	std::optional<std::int64_t> slide;
	unsigned agreeing = 0;
	for (const ExpectedGate &expected : kGates) {
		auto link = symbols.address_of(expected.handler);
		std::size_t at = expected.vector * kIdtGateSize;
		if (!link || at >= idt.size())
			continue;
		auto handler = idt_gate_handler(idt.subspan(at));
		if (!handler)
			return make_error("IDT gate " + std::to_string(expected.vector) + " is not a present interrupt gate",
					  at);
		auto candidate = static_cast<std::int64_t>(*handler - *link);
		if (slide && *slide != candidate)
			return make_error("IDT gates disagree on the slide (" + hex(*slide) + " vs " + hex(candidate) +
						  " at vector " + std::to_string(expected.vector) +
						  "): the symbols are not this kernel's",
					  at);
		slide = candidate;
		agreeing++;
	}
	if (agreeing < 2)
		return make_error("too few IDT gates with known handlers (" + std::to_string(agreeing) +
				  "): need the IDT's first 15 gates and symbols with asm_exc_* stubs");
	return *slide;
}

}  // namespace vtice::symbols
