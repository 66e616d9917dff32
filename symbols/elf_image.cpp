#include "symbols/elf_image.hpp"

#include <algorithm>
#include <cstring>
#include <gelf.h>
#include <libelf.h>

namespace vtice::symbols {

namespace {

struct ElfCloser {
	void operator()(Elf *elf) const { elf_end(elf); }
};
using ElfHandle = std::unique_ptr<Elf, ElfCloser>;

Result<ElfHandle> open_elf(ByteSpan bytes)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return make_error(std::string("libelf: ") + elf_errmsg(-1));
	// libelf reads ELF_C_READ images without writing to them.
	char *image = reinterpret_cast<char *>(const_cast<std::uint8_t *>(bytes.data()));
	ElfHandle elf(elf_memory(image, bytes.size()));
	if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
		return make_error(std::string("not a valid ELF file: ") + elf_errmsg(-1));
	return elf;
}

bool fits(ByteSpan bytes, std::uint64_t offset, std::uint64_t size)
{
	return offset <= bytes.size() && size <= bytes.size() - offset;
}

// nm's letter for an ELF symbol, from its binding and where it lives.
char nm_type(const GElf_Sym &sym, const std::vector<ElfSection> &sections)
{
	bool global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
	if (GELF_ST_BIND(sym.st_info) == STB_WEAK)
		return GELF_ST_TYPE(sym.st_info) == STT_OBJECT ? 'V' : 'W';
	char letter = '?';
	if (sym.st_shndx == SHN_ABS)
		letter = 'a';
	else if (sym.st_shndx == SHN_UNDEF)
		return 'U';
	else if (sym.st_shndx < sections.size()) {
		const ElfSection &section = sections[sym.st_shndx];
		if (section.flags & SHF_EXECINSTR)
			letter = 't';
		else if (section.type == SHT_NOBITS)
			letter = 'b';
		else if (section.flags & SHF_WRITE)
			letter = 'd';
		else if (section.flags & SHF_ALLOC)
			letter = 'r';
		else
			letter = 'n';
	}
	return global && letter != '?' ? static_cast<char>(letter - 'a' + 'A') : letter;
}

}  // namespace

bool ElfImage::looks_like_elf(ByteSpan bytes)
{
	return bytes.size() >= 4 && std::memcmp(bytes.data(), "\x7f" "ELF", 4) == 0;
}

Result<void> ElfImage::read_sections(Elf *elf, std::uint64_t header_offset)
{
	std::size_t shstrndx = 0;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		shstrndx = 0;
	// Section 0 is kept so st_shndx indexes sections_ directly.
	for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr shdr;
		if (!gelf_getshdr(scn, &shdr))
			return make_error(std::string("bad section header: ") + elf_errmsg(-1), header_offset);
		std::size_t index = elf_ndxscn(scn);
		if (sections_.size() < index + 1)
			sections_.resize(index + 1);
		ElfSection &section = sections_[index];
		const char *name = shstrndx ? elf_strptr(elf, shstrndx, shdr.sh_name) : nullptr;
		section.name = name ? name : "";
		section.address = shdr.sh_addr;
		section.offset = shdr.sh_offset;
		section.size = shdr.sh_size;
		section.flags = shdr.sh_flags;
		section.type = shdr.sh_type;
		section.has_bytes = shdr.sh_type != SHT_NOBITS && fits(bytes(), shdr.sh_offset, shdr.sh_size);
		if (shdr.sh_type == SHT_SYMTAB && section.has_bytes)
			symtab_index_ = index;
	}
	return {};
}

void ElfImage::read_segments(Elf *elf)
{
	std::size_t phnum = 0;
	if (elf_getphdrnum(elf, &phnum) != 0)
		phnum = 0;
	for (std::size_t i = 0; i < phnum; i++) {
		GElf_Phdr phdr;
		if (!gelf_getphdr(elf, static_cast<int>(i), &phdr) || phdr.p_type != PT_LOAD)
			continue;
		std::uint64_t file_size = phdr.p_filesz;
		if (!fits(bytes(), phdr.p_offset, file_size)) {  // truncated file: keep what is there
			needed_size_ = std::max(needed_size_.value_or(0), phdr.p_offset + phdr.p_filesz);
			file_size = phdr.p_offset < bytes().size() ? bytes().size() - phdr.p_offset : 0;
		}
		segments_.push_back({phdr.p_vaddr, phdr.p_offset, file_size, phdr.p_memsz, phdr.p_flags});
	}
}

Result<ElfImage> ElfImage::parse(SharedBuffer bytes)
{
	ElfImage image;
	image.bytes_ = std::move(bytes);
	auto elf = open_elf(image.bytes());
	if (!elf)
		return elf.error();
	GElf_Ehdr ehdr;
	if (!gelf_getehdr(elf->get(), &ehdr))
		return make_error(std::string("bad ELF header: ") + elf_errmsg(-1), 0);
	image.machine_ = ehdr.e_machine;
	image.is_64bit_ = gelf_getclass(elf->get()) == ELFCLASS64;
	if (auto sections = image.read_sections(elf->get(), ehdr.e_shoff); !sections)
		return sections.error();
	image.read_segments(elf->get());
	return image;
}

const ElfSection *ElfImage::section(std::string_view name) const
{
	for (const ElfSection &section : sections_)
		if (section.name == name)
			return &section;
	return nullptr;
}

ByteSpan ElfImage::section_bytes(const ElfSection &section) const
{
	if (!section.has_bytes)
		return {};
	return bytes().subspan(section.offset, section.size);
}

ByteSpan ElfImage::segment_bytes(const ElfSegment &segment) const
{
	if (!fits(bytes(), segment.offset, segment.file_size))
		return {};
	return bytes().subspan(segment.offset, segment.file_size);
}

ByteSpan ElfImage::at_vaddr(std::uint64_t vaddr, std::size_t size) const
{
	for (const ElfSegment &segment : segments_) {
		if (vaddr < segment.vaddr || vaddr - segment.vaddr > segment.file_size)
			continue;
		std::uint64_t offset = vaddr - segment.vaddr;
		if (size > segment.file_size - offset)
			continue;
		return bytes().subspan(segment.offset + offset, size);
	}
	return {};
}

bool ElfImage::has_symtab() const
{
	return symtab_index_ != 0 && sections_[symtab_index_].size > 0;
}

Result<SymbolTable> ElfImage::symtab() const
{
	if (!has_symtab())
		return make_error("ELF file has no .symtab (stripped)");
	auto elf = open_elf(bytes());
	if (!elf)
		return elf.error();
	Elf_Scn *scn = elf_getscn(elf->get(), symtab_index_);
	GElf_Shdr shdr;
	Elf_Data *data = scn && gelf_getshdr(scn, &shdr) ? elf_getdata(scn, nullptr) : nullptr;
	if (!data || shdr.sh_entsize == 0)
		return make_error(std::string(".symtab unreadable: ") + elf_errmsg(-1), sections_[symtab_index_].offset);
	SymbolTable table;
	std::size_t count = shdr.sh_size / shdr.sh_entsize;
	for (std::size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, static_cast<int>(i), &sym))
			break;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_SECTION || type == STT_FILE || sym.st_shndx == SHN_UNDEF)
			continue;
		const char *name = elf_strptr(elf->get(), shdr.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		table.add(sym.st_value, nm_type(sym, sections_), name, {}, sym.st_size);
	}
	table.finalize();
	return table;
}

}  // namespace vtice::symbols
