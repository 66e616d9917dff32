// The kernel's ORC unwind tables (CONFIG_UNWINDER_ORC, x86-64): lookup of the
// entry for an instruction address and one unwinding step over a memory
// reader, so the debugger can walk a halted guest's kernel stack.
//
// __start_orc_unwind_ip is a sorted array of s32, each relative to its own
// address; __start_orc_unwind the parallel array of 6-byte entries
// {s16 sp_offset; s16 bp_offset; u16 flags}. The flags changed in 6.3:
//   <= 6.2: sp_reg:4 bp_reg:4 type:2 (CALL 0, REGS 1, REGS_PARTIAL 2) end:1
//   >= 6.3: sp_reg:4 bp_reg:4 type:3 (UNDEFINED 0, END_OF_STACK 1, CALL 2,
//           REGS 3, REGS_PARTIAL 4) signal:1
// The encoding is told apart by content: plain function entries (sp = SP+8,
// bp undefined) are CALL, so their type bits say which numbering is in use.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "symbols/elf_image.hpp"
#include "symbols/memory_reader.hpp"
#include "symbols/symbol_table.hpp"

namespace vtice::symbols {

enum class OrcReg : std::uint8_t {
	undefined = 0, prev_sp = 1, dx = 2, di = 3, bp = 4, sp = 5, r10 = 6, r13 = 7,
	bp_indirect = 8, sp_indirect = 9,
};

enum class OrcType : std::uint8_t { undefined, end_of_stack, call, regs, regs_partial };

struct OrcEntry {
	std::uint64_t ip = 0;  // first instruction the entry covers
	std::int16_t sp_offset = 0;
	std::int16_t bp_offset = 0;
	OrcReg sp_reg = OrcReg::undefined;
	OrcReg bp_reg = OrcReg::undefined;
	OrcType type = OrcType::undefined;
	bool signal = false;  // the frame was interrupted: look up ip, not ip - 1
};

class OrcTable {
public:
	// Finds the tables through __start_orc_unwind_ip/__stop_orc_unwind_ip/
	// __start_orc_unwind in symbols and reads them with read. The ip space
	// is that of the addresses read: link-time for an image, run-time for
	// a live guest (pass a table with the slide set).
	static Result<OrcTable> load(const SymbolTable &symbols, const MemoryReader &read);
	static Result<OrcTable> load(const SymbolTable &symbols, const ElfImage &image);
	// count entries at ip_table and entries, as a module's struct module
	// names them (arch.orc_unwind_ip, arch.orc_unwind, arch.num_orcs).
	// format_of: a table of the same kernel, whose flags encoding this one
	// shares (a small module may have no plain entries to tell it by).
	static Result<OrcTable> load(std::uint64_t ip_table, std::uint64_t count, std::uint64_t entries,
				     const MemoryReader &read, const OrcTable *format_of = nullptr);

	std::size_t size() const { return ip_offsets_.size(); }
	// Moves a table read from an image to where a KASLR slide put the
	// kernel: each ip is relative to its own slot, so only that moves.
	void rebase(std::int64_t slide) { ip_table_ += static_cast<std::uint64_t>(slide); }
	bool new_format() const { return new_format_; }
	// The entry covering ip (the last one starting at or below it).
	std::optional<OrcEntry> find(std::uint64_t ip) const;
	// ip lies between the first and the last entry: this table's text; or,
	// once limited, in [lo, hi).
	bool covers(std::uint64_t ip) const;
	// The text the table is for, when its entries span more: a module's
	// entries for its init text, which the kernel keeps after freeing that
	// text, can sit on either side of another module's text.
	void limit_to(std::uint64_t lo, std::uint64_t hi)
	{
		text_lo_ = lo;
		text_hi_ = hi;
	}

private:
	std::uint64_t ip_at(std::size_t index) const;
	OrcEntry decode(std::size_t index) const;
	bool detect_format();

	std::uint64_t ip_table_ = 0;  // address of __start_orc_unwind_ip
	std::vector<std::int32_t> ip_offsets_;
	std::vector<std::uint8_t> entries_;
	bool new_format_ = false;
	std::uint64_t text_lo_ = 0, text_hi_ = 0;  // limit_to(); 0, 0: none
};

// The running kernel's tables and its modules' (each module has its own,
// sorted at load: arch/x86/kernel/unwind_orc.c), looked up by address.
class OrcTables {
public:
	explicit OrcTables(OrcTable kernel) : kernel_(std::move(kernel)) {}

	const OrcTable &kernel() const { return kernel_; }
	std::size_t modules() const { return modules_.size(); }
	void set_modules(std::vector<OrcTable> modules) { modules_ = std::move(modules); }
	// The table whose text holds ip; null outside every table.
	const OrcTable *for_ip(std::uint64_t ip) const;

private:
	OrcTable kernel_;
	std::vector<OrcTable> modules_;
};

struct UnwindRegs {
	std::uint64_t rip = 0;
	std::uint64_t rsp = 0;
	std::uint64_t rbp = 0;
	// True for the interrupted frame (a breakpoint, an exception) where rip is
	// the next instruction to run; false after a CALL frame, where rip is a
	// return address and the call itself is at rip - 1.
	bool exact_ip = true;
};

struct UnwindStep {
	UnwindRegs caller;
	bool end_of_stack = false;  // reached the entry code; caller is unset
};

Result<UnwindStep> unwind_step(const OrcTable &orc, const UnwindRegs &regs, const MemoryReader &read);

}  // namespace vtice::symbols
