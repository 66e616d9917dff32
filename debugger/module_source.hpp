// What the kernel's loaded modules add to the kernel's own tables: their ORC
// tables for the unwinder and their symbols for naming addresses, each
// found and read when first needed (the console walks the kernel's list of
// modules through the target: console/stub_modules.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "symbols/orc.hpp"
#include "vtice/result.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice::dbg {

class ModuleSource {
public:
	virtual ~ModuleSource() = default;
	// The table of the module whose text holds ip; null when no module's
	// does; an error when that module's tables cannot be had (said again
	// at each ask, not read again).
	virtual Result<const symbols::OrcTable *> table_for(std::uint64_t ip) = 0;
	// The module symbol covering address, or nothing (also when that
	// module's symbols cannot be read).
	virtual std::optional<SymbolHit> symbolize(std::uint64_t address) = 0;
	// The address of a module symbol of that name (a function's first),
	// or nothing. A name the modules read so far lack has every module's
	// symbols read, once per name: kilobytes a module over a serial line.
	virtual std::optional<std::uint64_t> lookup(std::string_view name) = 0;
};

}  // namespace vtice::dbg
