// What the debugger learns about the kernel right after attaching: the KASLR
// slide (from the IDT), the symbols (a file the user gave, or kallsyms
// recovered from guest memory) and the ORC unwind tables (from guest memory).
// Shared by batch mode and the TUI.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "output.hpp"
#include "session.hpp"

namespace vtice::dbg {

// The IDT is mapped read-only at the start of the cpu_entry_area on x86-64
// (CPU_ENTRY_AREA_RO_IDT, arch/x86/include/asm/pgtable_64_types.h), at a
// fixed address that KASLR does not move.
inline constexpr std::uint64_t kCpuEntryAreaIdt = 0xfffffe0000000000ull;

// linux_banner is "Linux version RELEASE (BUILDER) (COMPILERS) #N ... (DATE)\n",
// well under this.
inline constexpr std::size_t kBannerMax = 512;

struct KernelSetupOptions {
	std::string symbols_file;   // --symbols: vmlinux, vmlinuz, System.map, /proc/kallsyms text
	// symbols_file as the caller loaded it already (to refuse a bad file
	// before connecting); null: setup loads symbols_file itself.
	std::shared_ptr<const SymbolList> symbols_loaded;
	bool recover_symbols = true;  // from guest memory when no file is given
	bool load_orc = true;
	// Without symbols_file: first look for an image whose banner the running
	// kernel shows (a slow link would take minutes to carry kallsyms).
	std::vector<std::string> image_candidates;
	// Without symbols_file: where kernel memory caches live (kernel_cache.hpp);
	// empty: neither read nor written.
	std::string cache_dir;
};

// Where a kernel image may lie on this host, newest first: /boot/vmlinuz-*,
// /boot/vmlinux-*, /usr/lib/debug/boot/vmlinux-* (at most max of them).
std::vector<std::string> installed_kernel_images(std::size_t max = 8);

struct KernelInfo {
	std::optional<std::uint64_t> divide_error_handler;  // IDT vector 0 (asm_exc_divide_error)
	std::optional<std::int64_t> slide;
	std::string symbols;  // where symbols came from, or why there are none
	std::string symbols_file;  // the image used (given or found), for ORC
	std::string cache;         // "read FILE" / "saved FILE" / why not, or empty
	std::string orc;      // "384849 ORC entries from guest memory", or why not
};

// Loads symbols from a file; the symbols/ library plugs in here (see
// symbols_adapter.cpp). Addresses are as the file records them.
using SymbolFileLoader = std::function<Result<std::unique_ptr<SymbolList>>(const std::string &path)>;
// Recovers kallsyms from a window of guest memory [base, base + length).
using MemorySymbolRecovery = std::function<Result<std::unique_ptr<SymbolList>>(
	const std::vector<std::uint8_t> &window, std::uint64_t base)>;

SymbolFileLoader default_symbol_file_loader();
MemorySymbolRecovery default_memory_symbol_recovery();  // empty when the library is absent

// Reads IDT gate `vector` and returns its handler address.
Result<std::uint64_t> read_idt_handler(Session &session, unsigned vector = 0);

Result<KernelInfo> setup_kernel(Session &session, const KernelSetupOptions &options, Output &log);

}  // namespace vtice::dbg
