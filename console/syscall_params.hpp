// args->NAME in syscall:NAME probes: a syscall's parameters as the running
// kernel declares them to its own syscall trace events (tracefs'
// events/syscalls/sys_enter_*/format). The kernel's BTF cannot say: every
// syscall's function takes one struct pt_regs *. But each SYSCALL_DEFINEn
// leaves a struct syscall_metadata in the kernel's memory with the names
// and C types of its arguments as written, and at boot
// (kernel/trace/trace_syscalls.c, init_ftrace_syscalls) the kernel numbers
// them: meta->syscall_nr, and the array syscalls_metadata[nr]. Both need
// CONFIG_FTRACE_SYSCALLS, which Debian's kernels have.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "btf/btf_types.hpp"
#include "checker.hpp"
#include "kernel_btf.hpp"
#include "symbols/memory_reader.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

// Where struct syscall_metadata's fields are (the kernel's BTF says).
struct SyscallMetadataLayout {
	std::uint64_t name = 0, syscall_nr = 0, nb_args = 0, types = 0, args = 0, size = 0;
};
Result<SyscallMetadataLayout> syscall_metadata_layout(const dbg::btf::Types &kernel);

// One argument as the syscall's definition spells it: "filename",
// "const char *" (__user is empty outside sparse; a "__user" is taken too).
struct DeclaredParam {
	std::string name, type;
};

// The kernel's memory: its symbols' addresses (kallsyms) and a reader.
struct KernelMemory {
	std::function<std::optional<std::uint64_t>(std::string_view symbol)> symbol;
	symbols::MemoryReader read;
};

// Syscall nr's arguments as the kernel declares them: through the
// kernel's own index (syscalls_metadata, a KALLSYMS_ALL kernel's), or
// else among the section's entries (__start_syscalls_metadata to
// __stop_syscalls_metadata, at most 4,096) the one numbered nr. An error
// says why none (no such symbols, no metadata for nr, memory unreadable).
Result<std::vector<DeclaredParam>> read_syscall_declaration(std::uint64_t nr, const SyscallMetadataLayout &layout,
							     const KernelMemory &memory);

// A declared argument as args->NAME reads it: an integer (C's own names,
// LP64, or a typedef the kernel's BTF has, as "umode_t") its width and
// sign, as the kernel's SYSCALL_DEFINE wrapper narrows the register; a
// pointer, or a type the BTF lacks, the register whole (as the kernel's
// own sys_enter events show every argument).
probes::Param param_of_declaration(const DeclaredParam &declared, const dbg::btf::Types &kernel);

// The checker's lookup over the kernel's types and memory. memory is
// asked for on the first question only (opening /proc/kcore, say).
using KernelMemorySource = std::function<Result<KernelMemory>()>;
probes::SyscallParamLookup syscall_params(std::shared_ptr<KernelBtf> btf, KernelMemorySource memory);

}  // namespace vtice::console
