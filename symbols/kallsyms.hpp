// Recovering the kernel's own symbol table (CONFIG_KALLSYMS) from an image or
// a memory window, by the content of its tables rather than a fixed layout.
//
// scripts/kallsyms.c has emitted the same tables in three orders:
//   classic (<= 6.1): offsets, relative_base, num_syms, names, markers,
//                     token_table, token_index
//   6.2-style:        the same with seqs_of_names between markers and
//                     token_table (Debian's 6.1 stable kernels carry it)
//   6.4-style:        num_syms, names, markers, token_table, token_index,
//                     offsets, relative_base, seqs_of_names
// What holds in all of them, and what the search relies on: each table
// starts 8-byte aligned; token_index (256 u16) follows token_table (256
// NUL-terminated strings); names follows num_syms; markers follows names.
// Offsets are found where either order puts them and accepted only if the
// addresses they give are sorted, as the kernel sorts them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "symbols/bytes.hpp"
#include "symbols/memory_reader.hpp"
#include "symbols/symbol_table.hpp"

namespace vtice::symbols {

enum class KallsymsAddressMode {
	absolute,         // kallsyms_addresses: unsigned long[]
	relative,         // base + (u32)offset
	absolute_percpu,  // offset >= 0: absolute (per-cpu); else base - 1 - offset
};

struct KallsymsLayout {
	static constexpr std::size_t npos = static_cast<std::size_t>(-1);

	// Byte offsets into the searched window; vaddr = base_vaddr + offset.
	std::uint64_t base_vaddr = 0;
	std::size_t token_table = npos;
	std::size_t token_index = npos;
	std::size_t num_syms_at = npos;
	std::size_t names = npos;
	std::size_t names_end = npos;  // one past the last name decoded
	std::size_t markers = npos;
	std::size_t addresses = npos;  // kallsyms_offsets or kallsyms_addresses
	std::size_t relative_base_at = npos;
	std::size_t seqs_of_names = npos;

	std::uint32_t num_syms = 0;
	std::uint32_t names_decoded = 0;  // < num_syms when the window was cut short
	unsigned marker_width = 0;        // 4 or 8 bytes
	KallsymsAddressMode mode = KallsymsAddressMode::absolute_percpu;
	std::uint64_t relative_base = 0;

	// "6.2-style", "6.4-style" or "classic"
	std::string style() const;
};

struct KallsymsRecovery {
	SymbolTable table;
	KallsymsLayout layout;
	std::optional<Error> partial;  // set when only a prefix could be decoded
};

// base_vaddr is the virtual address of bytes[0]; it only matters for the
// alignment of the tables and for reporting where they are.
Result<KallsymsRecovery> recover_kallsyms_tables(ByteSpan bytes, std::uint64_t base_vaddr);

// The same, for callers that only want the symbols (partial results are
// returned as they are).
Result<SymbolTable> recover_kallsyms(ByteSpan bytes, std::uint64_t base_vaddr);

// Reads [start, start + length) page by page through read (pages that cannot
// be read become zeros and are counted) and recovers the tables from it: the
// debugger's path for a halted guest, with start at _text or .rodata.
struct MemoryRecovery {
	KallsymsRecovery recovery;
	std::size_t unreadable_pages = 0;
};
Result<MemoryRecovery> recover_kallsyms_from_memory(const MemoryReader &read, std::uint64_t start,
						    std::uint64_t length);

}  // namespace vtice::symbols
