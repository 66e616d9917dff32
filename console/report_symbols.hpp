// The --symbols seam of `vtice report`: names (and, from a vmlinux, code)
// beyond what a trace embeds. Symbol files are read by the symbols/ library
// when the build has it (target vtice_symbols); the trace decoder only ever
// sees a Symbolizer and a CodeSource.
#pragma once

#include <memory>
#include <string>

#include "code_source.hpp"
#include "vtice/result.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice::console {

struct ExternalSymbols {
	Symbolizer symbolize;                        // empty when the file held no symbols
	std::unique_ptr<trace::CodeSource> code;     // set when the file is an ELF image
	std::string description;
};

// path: vmlinux, vmlinuz, System.map or a copy of /proc/kallsyms; slide is the
// trace's KASLR slide.
Result<ExternalSymbols> load_external_symbols(const std::string &path, std::uint64_t slide);

}  // namespace vtice::console
