// The notes of a kernel core file, as the kernel's own crash path writes
// them (kernel/crash_core.c, fs/proc/vmcore.c): one NT_PRSTATUS per CPU with
// its registers, and the VMCOREINFO text that tells crash and drgn the
// kernel's release, page size, KASLR offset and the layout of its structures.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vtice/result.hpp"

namespace vtice::dbg::vmcore {

// The registers of x86-64's user_regs_struct (arch/x86/include/asm/user_64.h),
// the layout of elf_gregset_t in a PRSTATUS, in its order. "orig_rax" is no
// stub register: it is written as -1, as for a CPU stopped outside a syscall.
inline constexpr std::array<const char *, 27> kPrstatusRegisters = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx", "rsi",
	"rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs"};

using PrstatusRegisters = std::array<std::uint64_t, kPrstatusRegisters.size()>;

// struct elf_prstatus for x86-64 (336 bytes): pid and registers; the signal
// and time fields stay zero.
std::vector<std::uint8_t> prstatus_note(const PrstatusRegisters &registers, std::int32_t pid);

// The kernel's vmcoreinfo text, checked: printable KEY=VALUE lines, with
// OSRELEASE and PAGESIZE. An error says what is wrong.
Result<void> check_vmcoreinfo(std::string_view text);
std::vector<std::uint8_t> vmcoreinfo_note(std::string_view text);

// One value of the text ("OSRELEASE", "NUMBER(phys_base)"), or empty.
std::string vmcoreinfo_value(std::string_view text, std::string_view key);

}  // namespace vtice::dbg::vmcore
