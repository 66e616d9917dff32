// libFuzzer target for what the console reads of a hostile kernel's
// modules through a debug stub (console/module_orc.hpp,
// console/module_symbols.hpp, console/stub_module_btf.hpp): the input is
// the kernel's memory from kBase on, the list of modules' head at kBase;
// every module the walk finds has its ORC table loaded and its kallsyms
// read, and addresses across the window are named; the list of modules'
// BTF (btf_modules), its head at kBtfHead, is walked for a module's; and
// syscalls' declarations (struct syscall_metadata) are read.
// Layouts are 6.1's (the tests check them against pahole). Nothing may crash, read past the window's bounds
// checks, or allocate beyond the bounds the readers promise.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "module_orc.hpp"
#include "module_symbols.hpp"
#include "stub_module_btf.hpp"
#include "syscall_params.hpp"

using namespace vtice;
using namespace vtice::console;

namespace {

constexpr std::uint64_t kBase = 0xffffffffc0000000ull;
constexpr ModuleOrcLayout kOrc{.ip_table = 440, .entries = 448, .count = 432, .text_base = 320, .text_size = 332};
constexpr ModuleListLayout kList{.list = 8, .name = 24, .name_size = 56};
constexpr ModuleKallsymsLayout kKallsyms{.kallsyms = 0x1e8, .symtab = 0, .num_symtab = 8, .strtab = 16, .typetab = 24};
constexpr BtfModuleLayout kBtf{.list = 0, .btf = 24, .name = 144, .name_size = 56, .data = 0, .data_size = 80};
constexpr std::uint64_t kBtfHead = kBase + 0x20;
constexpr SyscallMetadataLayout kSyscallMetadata{.name = 0, .syscall_nr = 8, .nb_args = 12, .types = 16, .args = 24,
						 .size = 64};
constexpr std::uint64_t kSyscallIndex = kBase + 0x30;
constexpr std::uint64_t kSectionStart = kBase + 0x38, kSectionStop = kBase + 0x238;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	symbols::MemoryReader read = [&](std::uint64_t address, std::span<std::uint8_t> out) {
		if (address < kBase || address - kBase > size || out.size() > size - (address - kBase))
			return false;
		if (!out.empty())
			std::memcpy(out.data(), data + (address - kBase), out.size());
		return true;
	};
	// The kernel's table: two entries of its own, the flags encoding the modules share.
	static const std::uint8_t kernel_bytes[2 * 4 + 2 * 6] = {0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 5, 2,
								  8, 0, 0, 0, 5, 2};
	symbols::MemoryReader kernel_read = [](std::uint64_t address, std::span<std::uint8_t> out) {
		if (address < 0x1000 || address - 0x1000 + out.size() > sizeof(kernel_bytes))
			return false;
		std::memcpy(out.data(), kernel_bytes + (address - 0x1000), out.size());
		return true;
	};
	auto kernel = symbols::OrcTable::load(0x1000, 2, 0x1008, kernel_read);
	if (!kernel)
		return 0;
	auto btf = read_kept_module_btf(kBtf, read, kBtfHead, "msr", {});
	if (btf && btf->size() > (32u << 20))
		__builtin_trap();	// promised at most 32 MiB
	// A syscall's declaration through the kernel's index at kSyscallIndex,
	// then through the section kSectionStart..kSectionStop (syscall_params.hpp).
	for (bool indexed : {true, false}) {
		KernelMemory memory{[indexed](std::string_view name) -> std::optional<std::uint64_t> {
					    if (name == "syscalls_metadata" && indexed)
						    return kSyscallIndex;
					    if (name == "__start_syscalls_metadata")
						    return kSectionStart;
					    if (name == "__stop_syscalls_metadata")
						    return kSectionStop;
					    return std::nullopt;
				    },
				    read};
		for (std::uint64_t nr : {0ull, 5ull, 257ull}) {
			auto declared = read_syscall_declaration(nr, kSyscallMetadata, memory);
			if (declared && declared->size() > 6)
				__builtin_trap();	// promised at most 6
		}
	}
	ModuleList listed = list_modules(kOrc, kList, read, kBase);
	for (const ListedModule &m : listed.modules) {
		auto table = load_listed_module(m, read, *kernel);
		if (table)
			(void)table->find(m.text_lo);
		auto symbols = read_module_symbols(kKallsyms, read, m.address);
		if (!symbols)
			continue;
		for (std::size_t i = 1; i < symbols->size(); i++)
			if ((*symbols)[i].address < (*symbols)[i - 1].address)
				__builtin_trap();	// promised sorted
		for (std::uint64_t at = m.text_lo; at < m.text_lo + 4096; at += 61)
			(void)module_symbol_at(*symbols, at);
	}
	return 0;
}
