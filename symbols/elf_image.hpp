// Read-only access to an ELF file held in memory: sections, load segments,
// virtual-address reads and the .symtab. The only place libelf is used.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbols/bytes.hpp"
#include "symbols/symbol_table.hpp"

// libelf's handle, declared here so users of this header need not see libelf.
typedef struct Elf Elf;

namespace vtice::symbols {

struct ElfSection {
	std::string name;
	std::uint64_t address = 0;
	std::uint64_t offset = 0;
	std::uint64_t size = 0;
	std::uint64_t flags = 0;  // SHF_*
	std::uint32_t type = 0;   // SHT_*
	bool has_bytes = false;   // false for SHT_NOBITS or when it lies outside the file
};

struct ElfSegment {
	std::uint64_t vaddr = 0;
	std::uint64_t offset = 0;
	std::uint64_t file_size = 0;
	std::uint64_t memory_size = 0;
	std::uint32_t flags = 0;  // PF_*
};

class ElfImage {
public:
	static bool looks_like_elf(ByteSpan bytes);
	static Result<ElfImage> parse(SharedBuffer bytes);
	static Result<ElfImage> parse(std::shared_ptr<const Bytes> bytes) { return parse(share_bytes(std::move(bytes))); }

	ByteSpan bytes() const { return bytes_->bytes(); }
	SharedBuffer shared_bytes() const { return bytes_; }
	std::uint16_t machine() const { return machine_; }
	bool is_64bit() const { return is_64bit_; }

	const std::vector<ElfSection> &sections() const { return sections_; }
	const ElfSection *section(std::string_view name) const;
	ByteSpan section_bytes(const ElfSection &section) const;
	// PT_LOAD segments with file bytes, in program-header order.
	const std::vector<ElfSegment> &segments() const { return segments_; }
	ByteSpan segment_bytes(const ElfSegment &segment) const;
	// size bytes at vaddr if they lie in one segment's file-backed part.
	ByteSpan at_vaddr(std::uint64_t vaddr, std::size_t size) const;

	// The size the program headers need when the file is shorter than that.
	std::optional<std::uint64_t> truncated_from() const { return needed_size_; }

	bool has_symtab() const;
	Result<SymbolTable> symtab() const;

private:
	Result<void> read_sections(Elf *elf, std::uint64_t header_offset);
	void read_segments(Elf *elf);

	SharedBuffer bytes_;
	std::vector<ElfSection> sections_;
	std::vector<ElfSegment> segments_;
	std::size_t symtab_index_ = 0;  // 0 = none
	std::optional<std::uint64_t> needed_size_;
	std::uint16_t machine_ = 0;
	bool is_64bit_ = false;
};

}  // namespace vtice::symbols
