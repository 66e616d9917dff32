// The one class that wraps Zydis (CONVENTIONS.md §11). Nothing else in vtice
// includes Zydis headers.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "vtice/result.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice {

enum class BranchKind : std::uint8_t {
	None,     // falls through to the next instruction
	Call,
	Ret,
	Jmp,
	Jcc,      // conditional: jcc, jrcxz, loop*
	Syscall,  // syscall, sysenter
	Sysret,   // sysret, sysexit
	Int,      // int n, int3, into, int1, ud2-style traps are None
	Iret,
};

const char *branch_kind_name(BranchKind kind);

struct Instruction {
	std::uint64_t address = 0;
	std::uint8_t length = 0;
	std::array<std::uint8_t, 15> bytes{};
	BranchKind branch = BranchKind::None;
	bool indirect = false;                   // target comes from a register or memory
	std::optional<std::uint64_t> target;     // direct branch target
	std::optional<std::uint64_t> rip_relative; // address a RIP-relative memory operand refers to
	// Unsafe inside a hypervisor's branch step (docs/tracing.md): reads or
	// loads RFLAGS (PUSHF, POPF, IRET, SYSCALL, SYSRET, SYSENTER, SYSEXIT),
	// INT n, HLT, or MOV to SS. The module's own decoder has the same list.
	bool tf_hazard = false;

	std::uint64_t next() const { return address + length; }
	bool is_branch() const { return branch != BranchKind::None; }
};

enum class Syntax { Intel, Att };

class Disassembler {
public:
	explicit Disassembler(Syntax syntax = Syntax::Intel);
	~Disassembler();
	Disassembler(const Disassembler &) = delete;
	Disassembler &operator=(const Disassembler &) = delete;

	// Decodes one 64-bit instruction from code, which starts at address.
	Result<Instruction> decode(std::span<const std::uint8_t> code, std::uint64_t address) const;

	// "call do_filp_open", "mov rax, qword ptr [rip+0x1234] ; 0xffff... <sym+0x8>".
	std::string format(const Instruction &insn, const Symbolizer &symbolize = {}) const;

	struct Impl;  // declared public so the Zydis formatter hook can reach it

private:
	std::unique_ptr<Impl> impl_;  // pimpl keeps Zydis types out of this header
};

}  // namespace vtice
