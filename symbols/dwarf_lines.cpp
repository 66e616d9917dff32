#include "symbols/dwarf_lines.hpp"

#include <elfutils/libdw.h>
#include <libelf.h>

namespace vtice::symbols {

struct DwarfLines::State {
	SharedBuffer bytes;
	Elf *elf = nullptr;
	Dwarf *dwarf = nullptr;

	~State()
	{
		if (dwarf)
			dwarf_end(dwarf);
		if (elf)
			elf_end(elf);
	}
};

DwarfLines::DwarfLines(DwarfLines &&) noexcept = default;
DwarfLines &DwarfLines::operator=(DwarfLines &&) noexcept = default;
DwarfLines::~DwarfLines() = default;

Result<DwarfLines> DwarfLines::open(SharedBuffer elf_bytes)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return make_error(std::string("libelf: ") + elf_errmsg(-1));
	auto state = std::make_unique<State>();
	state->bytes = std::move(elf_bytes);
	// libelf and libdw only read an ELF_C_READ memory image.
	ByteSpan bytes = state->bytes->bytes();
	char *image = reinterpret_cast<char *>(const_cast<std::uint8_t *>(bytes.data()));
	state->elf = elf_memory(image, bytes.size());
	if (!state->elf)
		return make_error(std::string("not a valid ELF file: ") + elf_errmsg(-1));
	state->dwarf = dwarf_begin_elf(state->elf, DWARF_C_READ, nullptr);
	if (!state->dwarf)
		return make_error(std::string("no DWARF debug info: ") + dwarf_errmsg(-1));
	DwarfLines lines;
	lines.state_ = std::move(state);
	return lines;
}

std::optional<SourceLine> DwarfLines::lookup(std::uint64_t address) const
{
	Dwarf_Die cu;
	if (!state_ || !dwarf_addrdie(state_->dwarf, address, &cu))
		return std::nullopt;
	Dwarf_Line *line = dwarf_getsrc_die(&cu, address);
	if (!line)
		return std::nullopt;
	SourceLine out;
	const char *file = dwarf_linesrc(line, nullptr, nullptr);
	out.file = file ? file : "??";
	dwarf_lineno(line, &out.line);
	dwarf_linecol(line, &out.column);
	return out;
}

}  // namespace vtice::symbols
