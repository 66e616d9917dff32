// A loaded module's symbols as the kernel keeps them for kallsyms (struct
// module's kallsyms: struct mod_kallsyms's symtab, strtab and typetab, in
// kernel/module/kallsyms.c), read through the kernel's memory: how a frame
// or an address in a module's text is named through the debug stub, where
// the console cannot read /proc/kallsyms.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "btf/btf_types.hpp"
#include "symbols/memory_reader.hpp"
#include "vtice/result.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice::console {

// Byte offsets of struct module's kallsyms (a pointer to the struct
// mod_kallsyms in use: the init-time one while the module initializes,
// then its core_kallsyms) and of that struct's fields.
struct ModuleKallsymsLayout {
	std::uint64_t kallsyms = 0;
	std::uint64_t symtab = 0, num_symtab = 0, strtab = 0, typetab = 0;
};

Result<ModuleKallsymsLayout> module_kallsyms_layout(const dbg::btf::Types &types);

struct ModuleSymbol {
	std::uint64_t address = 0, size = 0;	// size 0: up to the next symbol
	std::string name;
	char type = 0;	// nm's letter, as kallsyms shows it
};

// A module's symbols, sorted by address, read through read from the struct
// module at module; the symbol table's first entry (the ELF's null symbol)
// and the nameless ones left out.
Result<std::vector<ModuleSymbol>> read_module_symbols(const ModuleKallsymsLayout &layout,
						      const symbols::MemoryReader &read, std::uint64_t module);

// The symbol of sorted symbols that covers address: the last one at or
// below it, within its size, or below the next symbol when it has none.
std::optional<SymbolHit> module_symbol_at(const std::vector<ModuleSymbol> &symbols, std::uint64_t address);

}  // namespace vtice::console
