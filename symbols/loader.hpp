// One entry point for "give me the symbols in this file": the kind of source
// is detected from the content, never from the file name.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "symbols/dwarf_lines.hpp"
#include "symbols/elf_image.hpp"
#include "symbols/kallsyms.hpp"
#include "symbols/symbol_table.hpp"

namespace vtice::symbols {

enum class SourceKind {
	elf_symtab,        // ELF with a .symtab
	elf_kallsyms,      // ELF without .symtab: its kallsyms tables
	bzimage_kallsyms,  // vmlinuz: the inflated payload's kallsyms tables
	system_map,
	kallsyms_text,     // /proc/kallsyms
	memory_dump,       // raw bytes at a known virtual address
};

struct LoadOptions {
	std::optional<std::uint64_t> base;  // virtual address of byte 0 of a raw dump
	std::int64_t slide = 0;             // KASLR slide applied to every lookup
};

struct LoadedSymbols {
	std::shared_ptr<SymbolTable> table;
	SourceKind kind = SourceKind::memory_dump;
	std::string description;  // "kallsyms tables in /boot/vmlinuz (6.2-style layout)"
	std::optional<KallsymsLayout> layout;
	std::optional<Error> partial;   // only a prefix of the source could be read
	std::optional<ElfImage> image;  // ELF and bzImage sources: sections for the debugger
	std::shared_ptr<DwarfLines> lines;  // when the ELF has DWARF
};

Result<LoadedSymbols> load_symbols(const std::string &path, const LoadOptions &options = {});
Result<LoadedSymbols> load_symbols_from(SharedBuffer bytes, const std::string &name,
					const LoadOptions &options = {});
inline Result<LoadedSymbols> load_symbols_from(std::shared_ptr<const Bytes> bytes, const std::string &name,
					       const LoadOptions &options = {})
{
	return load_symbols_from(share_bytes(std::move(bytes)), name, options);
}

}  // namespace vtice::symbols
