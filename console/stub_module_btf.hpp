// args-> of a loaded module's function through a debug session (the vtice
// stub, QEMU's gdbstub, kgdb): the module's BTF as the running kernel keeps
// it. A module's .BTF section is gone once it is loaded (struct module's
// btf_data is cleared); kernel/bpf/btf.c keeps its own copy in the list
// btf_modules: each struct btf_module's btf is a struct btf whose name is
// the module's and whose data and data_size are the raw BTF the module
// brought, split on the kernel's. Layouts come from the kernel's BTF.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "module_btf.hpp"
#include "output.hpp"
#include "session.hpp"
#include "symbols/memory_reader.hpp"

namespace vtice::console {

// Where the fields are.
struct BtfModuleLayout {
	std::uint64_t list = 0, btf = 0;	// in struct btf_module
	std::uint64_t name = 0, name_size = 0, data = 0, data_size = 0;	// in struct btf
};
Result<BtfModuleLayout> btf_module_layout(const dbg::btf::Types &kernel);

// The raw BTF the kernel keeps for module, the list's head at head:
// at most 4,096 nodes (a list that does not end is refused) and 32 MiB;
// progress(bytes read, bytes) after each chunk.
using BytesProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;
Result<std::vector<std::uint8_t>> read_kept_module_btf(const BtfModuleLayout &layout, const symbols::MemoryReader &read,
						       std::uint64_t head, const std::string &module,
						       const BytesProgress &progress);

// The name of the module a function is in (module: the one the program
// names, if it has the function), or why none.
using FunctionModule = std::function<Result<std::string>(std::string_view function, std::string_view module)>;

// The lookup ProbeTypes asks for a function the kernel's BTF lacks: its
// module from module_of (StubModules::module_of_function), that module's
// BTF read from the kernel's memory through the session (log: progress).
ModuleTypesLookup stub_module_types(dbg::Session &session, FunctionModule module_of, dbg::Output &log);

}  // namespace vtice::console
