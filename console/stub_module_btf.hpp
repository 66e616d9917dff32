// args-> of a loaded module's function through a debug session (the vtice
// stub, QEMU's gdbstub, kgdb): the module's BTF as the running kernel keeps
// it. A module's .BTF section is gone once it is loaded (struct module's
// btf_data is cleared); kernel/bpf/btf.c keeps its own copy in the list
// btf_modules: each struct btf_module's btf is a struct btf whose name is
// the module's and whose data and data_size are the raw BTF the module
// brought, split on the kernel's. Layouts come from the kernel's BTF.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "module_btf.hpp"
#include "output.hpp"
#include "session.hpp"

namespace vtice::console {

// The name of the module a function is in, or why none.
using FunctionModule = std::function<Result<std::string>(std::string_view function)>;

// The lookup ProbeTypes asks for a function the kernel's BTF lacks: its
// module from module_of (StubModules::module_of_function), that module's
// BTF read from the kernel's memory through the session (log: progress).
ModuleTypesLookup stub_module_types(dbg::Session &session, FunctionModule module_of, dbg::Output &log);

}  // namespace vtice::console
