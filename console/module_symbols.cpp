// A module's symbols through the kernel's memory (module_symbols.hpp).
#include "module_symbols.hpp"

#include <algorithm>

#include "hex.hpp"
#include "module_orc.hpp"

namespace vtice::console {

namespace {

// A module keeps fewer symbols than this (the whole 6.1 kernel about
// 200,000; its largest modules, GPU drivers, tens of thousands): 3 MiB of
// table at most, which a hostile kernel cannot make the console read more of.
constexpr std::uint64_t kMaxModuleSymbols = 1u << 17;
constexpr std::uint64_t kElfSymSize = 24;	// Elf64_Sym: name, info, other, shndx, value, size
constexpr std::uint64_t kNameMax = 512;	// KSYM_NAME_LEN since 6.1 (128 before)
// The names are read up to this many bytes a symbol (a module's average is
// tens): a hostile st_name cannot make the console read gigabytes.
constexpr std::uint64_t kNameBytesPerSymbol = 128;

template <typename T>
T at(const std::vector<std::uint8_t> &bytes, std::uint64_t offset)
{
	T value;
	std::memcpy(&value, bytes.data() + offset, sizeof(T));
	return value;
}

// The names' bytes: up to the last name's start and a longest name past
// it, or, where the module's memory ends sooner, half as much, and so on:
// the names past what could be read are left out.
Result<std::vector<std::uint8_t>> read_names(const symbols::MemoryReader &read, std::uint64_t strtab,
					     std::uint64_t last_name)
{
	for (std::uint64_t size = last_name + kNameMax; size >= 16; size /= 2) {
		std::vector<std::uint8_t> names(size);
		if (read(strtab, names))
			return names;
	}
	return make_error("cannot read its symbols' names at " + dbg::hex(strtab));
}

}  // namespace

Result<ModuleKallsymsLayout> module_kallsyms_layout(const dbg::btf::Types &types)
{
	auto module = types.find("struct module");
	auto kallsyms = types.find("struct mod_kallsyms");
	if (!module || !kallsyms)
		return (module ? kallsyms : module).error();
	ModuleKallsymsLayout layout;
	auto pointer = member_byte_offset(types, *module, "struct module", "kallsyms");
	if (!pointer)
		return pointer.error();
	layout.kallsyms = *pointer;
	for (auto [field, path] : {std::pair{&layout.symtab, "symtab"}, std::pair{&layout.num_symtab, "num_symtab"},
				   std::pair{&layout.strtab, "strtab"}, std::pair{&layout.typetab, "typetab"}}) {
		auto offset = member_byte_offset(types, *kallsyms, "struct mod_kallsyms", path);
		if (!offset)
			return offset.error();
		*field = *offset;
	}
	return layout;
}

Result<std::vector<ModuleSymbol>> read_module_symbols(const ModuleKallsymsLayout &layout,
						      const symbols::MemoryReader &read, std::uint64_t module)
{
	auto kallsyms = read_value<std::uint64_t>(read, module + layout.kallsyms, "kallsyms");
	if (!kallsyms)
		return kallsyms.error();
	auto symtab = read_value<std::uint64_t>(read, *kallsyms + layout.symtab, "kallsyms' symtab");
	auto count = read_value<std::uint32_t>(read, *kallsyms + layout.num_symtab, "kallsyms' num_symtab");
	auto strtab = read_value<std::uint64_t>(read, *kallsyms + layout.strtab, "kallsyms' strtab");
	auto typetab = read_value<std::uint64_t>(read, *kallsyms + layout.typetab, "kallsyms' typetab");
	for (const auto *error : {symtab.ok() ? nullptr : &symtab.error(), count.ok() ? nullptr : &count.error(),
				  strtab.ok() ? nullptr : &strtab.error(), typetab.ok() ? nullptr : &typetab.error()})
		if (error)
			return *error;
	if (*count > kMaxModuleSymbols)
		return make_error("kallsyms' num_symtab is " + std::to_string(*count) + ": not believable");
	std::vector<std::uint8_t> entries(*count * kElfSymSize), letters(*count);
	if (!read(*symtab, entries) || !read(*typetab, letters))
		return make_error("cannot read its symbol table (" + std::to_string(*count) + " entries at " +
				  dbg::hex(*symtab) + ")");
	std::uint64_t last_name = 0, names_limit = *count * kNameBytesPerSymbol;
	for (std::uint64_t i = 0; i < *count; i++)
		last_name = std::max<std::uint64_t>(last_name, at<std::uint32_t>(entries, i * kElfSymSize));
	auto names = read_names(read, *strtab, std::min(last_name, names_limit));
	if (!names)
		return names.error();
	std::vector<ModuleSymbol> out;
	for (std::uint64_t i = 1; i < *count; i++) {
		std::uint32_t name = at<std::uint32_t>(entries, i * kElfSymSize);
		if (name >= names->size())
			continue;	// past the names read
		auto end = std::find(names->begin() + name, names->end(), 0);
		ModuleSymbol s{at<std::uint64_t>(entries, i * kElfSymSize + 8), at<std::uint64_t>(entries, i * kElfSymSize + 16),
			       std::string(names->begin() + name, end), static_cast<char>(letters[i])};
		if (end != names->end() && !s.name.empty() && s.address)
			out.push_back(std::move(s));
	}
	std::stable_sort(out.begin(), out.end(),
			 [](const ModuleSymbol &a, const ModuleSymbol &b) { return a.address < b.address; });
	return out;
}

std::optional<SymbolHit> module_symbol_at(const std::vector<ModuleSymbol> &symbols, std::uint64_t address)
{
	auto next = std::upper_bound(symbols.begin(), symbols.end(), address,
				     [](std::uint64_t a, const ModuleSymbol &s) { return a < s.address; });
	if (next == symbols.begin())
		return std::nullopt;
	const ModuleSymbol &s = *(next - 1);
	bool inside = s.size ? address - s.address < s.size : next == symbols.end() || address < next->address;
	if (!inside)
		return std::nullopt;
	return SymbolHit{s.name, s.address, address - s.address};
}

}  // namespace vtice::console
