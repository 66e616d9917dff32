// The running kernel's memory on the traced machine, as KernelMemory
// (syscall_params.hpp): its symbols from kallsyms, its bytes from kcore.
#pragma once

#include <string>

#include "syscall_params.hpp"

namespace vtice::console {

// kallsyms_path and kcore_path (/proc/kallsyms, /proc/kcore), opened when
// the source is first asked.
KernelMemorySource local_kernel_memory(std::string kallsyms_path, std::string kcore_path);

}  // namespace vtice::console
