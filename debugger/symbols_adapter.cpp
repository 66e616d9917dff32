// The seam to the symbols/ library: symbol files of every kind it knows
// (vmlinux with or without .symtab, vmlinuz, System.map, /proc/kallsyms) and
// kallsyms recovered from a window of guest memory, turned into the
// debugger's SymbolList.
#include "kernel_setup.hpp"
#include "symbols/kallsyms.hpp"
#include "symbols/loader.hpp"

namespace vtice::dbg {

namespace {

std::unique_ptr<SymbolList> to_list(const symbols::SymbolTable &table, std::string origin)
{
	std::vector<SymbolList::Entry> entries;
	entries.reserve(table.size());
	for (const auto &s : table.symbols()) {
		std::string name(table.name(s));
		if (s.module)
			name = std::string(table.module(s)) + ":" + name;
		entries.push_back({table.slid(s.address), std::move(name), s.type});
	}
	return std::make_unique<SymbolList>(std::move(entries), std::move(origin));
}

// The NUL-terminated string at linux_banner in the image, if it has one.
std::string image_banner(const symbols::LoadedSymbols &loaded)
{
	auto at = loaded.table->address_of("linux_banner");
	if (!at || !loaded.image)
		return {};
	symbols::ByteSpan bytes = loaded.image->at_vaddr(*at - static_cast<std::uint64_t>(loaded.table->slide()),
							  kBannerMax);
	std::string banner(bytes.begin(), bytes.end());
	return banner.substr(0, banner.find('\0'));
}

}  // namespace

SymbolFileLoader default_symbol_file_loader()
{
	return [](const std::string &path) -> Result<std::unique_ptr<SymbolList>> {
		auto loaded = symbols::load_symbols(path);
		if (!loaded)
			return make_error("cannot load symbols from " + path + ": " + loaded.error().to_string());
		if (!loaded->table || loaded->table->empty())
			return make_error(path + " holds no symbols");
		auto list = to_list(*loaded->table, loaded->description);
		list->set_image_banner(image_banner(*loaded));
		return list;
	};
}

MemorySymbolRecovery default_memory_symbol_recovery()
{
	return [](const std::vector<std::uint8_t> &window, std::uint64_t base) -> Result<std::unique_ptr<SymbolList>> {
		auto recovered = symbols::recover_kallsyms_tables(symbols::ByteSpan(window), base);
		if (!recovered)
			return recovered.error();
		// A window that cuts the tables short gives a prefix: read more instead.
		if (recovered->partial)
			return make_error("kallsyms tables continue past the window: " + recovered->partial->message);
		char where[64];
		std::snprintf(where, sizeof(where), " at 0x%llx",
			      static_cast<unsigned long long>(base + recovered->layout.names));
		return to_list(recovered->table, "kallsyms recovered from guest memory (" + recovered->layout.style() +
							 " layout" + where + ")");
	};
}

}  // namespace vtice::dbg
