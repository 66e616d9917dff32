// The types of a loaded module's functions (args->NAME of fn:ext4_read_iter):
// they are in the module's own BTF, split on the kernel's, which the kernel
// shows beside its own (/sys/kernel/btf/ext4 beside /sys/kernel/btf/vmlinux).
// Which module holds a function, kallsyms says ("... t msr_read\t[msr]").
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "btf/btf_types.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

struct ModuleTypes {
	std::string module;	// "msr"
	dbg::btf::Types types;	// the module's and the kernel's, split
};

// A function's module (module, when the program names it: fn:msr:msr_read;
// else the one module that has it) and that module's types, split on
// `kernel`; an error says why not (not a module's function, not that
// module's, no BTF for the module).
using ModuleTypesLookup = std::function<Result<ModuleTypes>(std::string_view function, std::string_view module,
							    const dbg::btf::Types &kernel)>;

// On the traced machine: kallsyms from kallsyms_path (read on the first
// question), the module's BTF from the file named after it in the
// directory of kernel_btf_path (/sys/kernel/btf/vmlinux -> /sys/kernel/btf/msr).
ModuleTypesLookup local_module_types(std::string kallsyms_path, std::string kernel_btf_path);

}  // namespace vtice::console
