// The kernel's ORC unwind tables (objtool; arch/x86/include/asm/orc_types.h)
// and an unwinder over them. Debian's kernels are built without frame
// pointers, so this is how their stacks are walked.
//
// The tables are two parallel arrays: .orc_unwind_ip (s32, each relative to
// its own address, sorted) and .orc_unwind (6-byte entries). They are read
// from guest memory (__start_orc_unwind_ip .. __stop_orc_unwind_ip,
// __start_orc_unwind, found through kallsyms) or from an image's sections.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "unwind.hpp"
#include "vtice/result.hpp"

namespace vtice::dbg {

// Entry flag layouts: V1 up to Linux 6.2 (type:2 CALL/REGS/REGS_PARTIAL,
// end:1); V3 from 6.4 (type:3 UNDEFINED/END_OF_STACK/CALL/REGS/REGS_PARTIAL,
// signal:1), identified by the kernel's .orc_header.
enum class OrcFormat : std::uint8_t { V1, V3 };

enum class OrcReg : std::uint8_t {
	Undefined = 0, PrevSp = 1, Dx = 2, Di = 3, Bp = 4, Sp = 5, R10 = 6, R13 = 7,
	BpIndirect = 8, SpIndirect = 9,
};

enum class OrcType : std::uint8_t { Undefined, EndOfStack, Call, Regs, RegsPartial };

struct OrcEntry {
	std::int16_t sp_offset = 0, bp_offset = 0;
	OrcReg sp_reg = OrcReg::Undefined, bp_reg = OrcReg::Undefined;
	OrcType type = OrcType::Undefined;
	bool signal = false;
};

class OrcTable {
public:
	// ip_table: the raw .orc_unwind_ip bytes at virtual address ip_base;
	// entries: the raw .orc_unwind bytes. Sizes must agree (n*4, n*6).
	static Result<OrcTable> parse(std::span<const std::uint8_t> ip_table, std::uint64_t ip_base,
				      std::span<const std::uint8_t> entries, OrcFormat format);

	// The entry covering ip (the last one at or below it), if any.
	std::optional<OrcEntry> find(std::uint64_t ip) const;
	std::size_t size() const { return ips_.size(); }

private:
	std::vector<std::uint64_t> ips_;
	std::vector<OrcEntry> entries_;
};

class OrcUnwinder final : public Unwinder {
public:
	explicit OrcUnwinder(OrcTable table) : table_(std::move(table)) {}
	Result<std::vector<Frame>> unwind(const UnwindRegs &regs, const MemoryReader &read,
					  std::size_t max_frames) const override;
	std::string name() const override { return "orc"; }

private:
	Result<bool> step(UnwindRegs &regs, bool &signal, const MemoryReader &read, std::string &note) const;
	OrcTable table_;
};

// Reads the tables from a running kernel given the addresses of the
// __start/__stop symbols (kallsyms), using the target's memory.
using BlockReader = std::function<Result<std::vector<std::uint8_t>>(std::uint64_t address, std::size_t length)>;
Result<OrcTable> read_orc_from_memory(const BlockReader &read, std::uint64_t start_ip, std::uint64_t stop_ip,
				      std::uint64_t start_entries, OrcFormat format = OrcFormat::V1);

}  // namespace vtice::dbg
