// What the dump reads of the stopped kernel besides its RAM: the
// VMCOREINFO text, each CPU's registers and running pid (the PRSTATUS
// notes), and where the kernel image lies, physically and virtually.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../btf/btf_types.hpp"
#include "../session.hpp"
#include "elf_core.hpp"
#include "vtice/result.hpp"

namespace vtice::dbg::vmcore {

// The value of a kernel variable of 8 bytes, by symbol.
Result<std::uint64_t> read_symbol_u64(Session &session, const char *name);

// The text the kernel keeps for kdump (kernel/crash_core.c: vmcoreinfo_data,
// vmcoreinfo_size), checked before it goes into the file.
Result<std::string> read_vmcoreinfo(Session &session);

// One PRSTATUS note per stub thread (QEMU and the vtice stub: one per CPU, in
// CPU order, which is how crash pairs notes with CPUs), each with the pid
// running there (how drgn pairs them). cpus receives their number.
Result<std::vector<std::uint8_t>> cpu_notes(Session &session, const btf::Types &types, unsigned &cpus);

// [_text, _end) as the kernel image's own PT_LOAD, what /proc/kcore's text
// segment covers and kexec-tools copies: drgn reads swapper_pg_dir through
// it before it can walk any page table. Nothing without the symbols.
std::optional<RamRange> kernel_image(Session &session);

}  // namespace vtice::dbg::vmcore
