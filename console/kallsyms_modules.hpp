// Which module a function is in, by /proc/kallsyms's text: a module's
// symbol ends in a tab and its name in brackets ("... t msr_read\t[msr]"),
// the kernel's own has none. kallsyms lists a name the kernel and a module
// share (Debian's msr_read is arch/x86/lib/msr.c's and msr.ko's) once each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vtice/result.hpp"

namespace vtice::console {

struct ModuleTextSymbol {
	std::uint64_t address = 0;
	std::string module;	// "" for the kernel's own
};

// Every text symbol ('t' or 'T') of that name, in kallsyms's order. A
// bracketed suffix that cannot be a module's name (a '/', a leading '.')
// leaves the line out.
std::vector<ModuleTextSymbol> text_symbols_named(std::string_view kallsyms_text, std::string_view function);

// "vfs_read", not "vfs_read.cold" (a part of a function the compiler split off).
bool is_c_identifier(std::string_view name);

// The kernel's init text, [_sinittext, _einittext): freed after boot
// (and unmapped), though kallsyms still names its functions: no probe
// point. Empty when a symbol is missing.
struct InitText {
	std::uint64_t begin = 0, end = 0;
	bool holds(std::uint64_t address) const { return address >= begin && address < end; }
};

// Every function kallsyms_text lists, once, sorted: NAME for the kernel's,
// MODULE:NAME for a module's (a fn: point's spelling); names that are no
// C identifier (the compiler's "f.cold", "f.isra.0") and the kernel's
// init functions left out.
std::vector<std::string> text_function_names(std::string_view kallsyms_text);

// The module kallsyms_text names for a function ("" for the kernel's own,
// nothing when no text symbol has the name); an error when the kernel and
// a module, or two modules, have a function of that name.
Result<std::optional<std::string>> module_of_function(std::string_view kallsyms_text, std::string_view function);

// The function of that name in module (vmlinux: the kernel's own), the
// first when the module has two; an error naming where it is instead.
Result<std::uint64_t> function_in_module(std::string_view kallsyms_text, std::string_view module,
					 std::string_view function);

}  // namespace vtice::console
