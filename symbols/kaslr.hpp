// The KASLR slide of a running kernel, from its interrupt descriptor table.
//
// Linux maps the IDT read-only at the fixed cpu_entry_area address
// 0xfffffe0000000000 whatever the slide, and the exception gates point at
// the asm_exc_* entry stubs in kernel text. The slide is the gate's run-time
// handler minus the stub's link-time address; several gates must agree.
#pragma once

#include <cstdint>
#include <optional>

#include "symbols/bytes.hpp"
#include "symbols/symbol_table.hpp"

namespace vtice::symbols {

constexpr std::uint64_t kLinuxIdtAddress = 0xfffffe0000000000ull;
constexpr std::size_t kIdtGateSize = 16;

// Handler address of one 16-byte 64-bit gate (SDM Vol. 3A §6.14.1, Figure
// 6-8), or nothing when the gate is not present or not an interrupt/trap gate.
std::optional<std::uint64_t> idt_gate_handler(ByteSpan gate);

// idt: the IDT's first bytes (at least 15 gates). symbols: link-time table
// (slide 0), e.g. recovered from the image.
Result<std::int64_t> kaslr_slide_from_idt(const SymbolTable &symbols, ByteSpan idt);

}  // namespace vtice::symbols
