// Test-time assembly with the GNU toolchain, and objdump as the independent
// peer. Expected values in the disasm and trace tests come from as/ld/nm/
// objdump output produced while the test runs, never from vtice itself.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vtice::test {

struct ElfFunction {
	std::string name;
	std::uint64_t address = 0, size = 0;
};

struct Assembled {
	std::uint64_t text_address = 0;
	std::vector<std::uint8_t> text;                // the linked .text bytes
	std::map<std::string, std::uint64_t> symbols;  // from nm, local symbols included
	std::vector<ElfFunction> functions;            // STT_FUNC symbols, from readelf
	std::string elf_path;                          // the linked file, for objdump
	std::shared_ptr<void> temp_dir;                // removes the work directory with the last copy
};

// Assembles source with `as --64` and links .text at text_address with `ld`.
// On failure returns nothing and fills error with the tool's output.
std::optional<Assembled> assemble(const std::string &source, std::uint64_t text_address,
				  std::string &error);

struct PeerInsn {
	std::uint64_t address = 0;
	std::string mnemonic;                 // "call", "mov"
	std::string operands;                 // objdump's text, "<sym>" and "# comment" removed
	std::optional<std::uint64_t> target;  // the address objdump printed for a direct branch
};

// objdump -d of the .text section; att selects AT&T syntax.
std::vector<PeerInsn> objdump(const Assembled &object, bool att);

// Runs a shell command and returns its stdout; exit status in *status.
std::string run_command(const std::string &command, int *status = nullptr);

}  // namespace vtice::test
