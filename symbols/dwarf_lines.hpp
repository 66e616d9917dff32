// Address -> source file:line from DWARF, for a vmlinux (or any ELF) built
// with debug info. The only place libdw is used.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "symbols/bytes.hpp"

namespace vtice::symbols {

struct SourceLine {
	std::string file;
	int line = 0;
	int column = 0;
};

class DwarfLines {
public:
	// Fails when the ELF carries no DWARF.
	static Result<DwarfLines> open(SharedBuffer elf_bytes);

	// address is a link-time address (subtract the slide first).
	std::optional<SourceLine> lookup(std::uint64_t address) const;

	DwarfLines(DwarfLines &&) noexcept;
	DwarfLines &operator=(DwarfLines &&) noexcept;
	~DwarfLines();

private:
	DwarfLines() = default;
	struct State;
	std::unique_ptr<State> state_;
};

}  // namespace vtice::symbols
