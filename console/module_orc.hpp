// The loaded modules' ORC tables, so a kernel stack unwinds through module
// text as the kernel's own unwinder does (arch/x86/kernel/unwind_orc.c
// keeps one sorted table per module in struct module's arch). Each module
// is found by name in /proc/modules, its struct module at the address
// sysfs gives for its .gnu.linkonce.this_module section (the struct is
// that section), the three fields at the offsets the kernel's BTF gives,
// and the tables read through the running kernel's memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "btf/btf_types.hpp"
#include "symbols/memory_reader.hpp"
#include "symbols/orc.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

// Byte offsets in struct module of arch.orc_unwind_ip, arch.orc_unwind and
// arch.num_orcs (CONFIG_UNWINDER_ORC).
struct ModuleOrcLayout {
	std::uint64_t ip_table = 0, entries = 0, count = 0;
};

Result<ModuleOrcLayout> module_orc_layout(const dbg::btf::Types &types);

struct ModuleOrcs {
	std::vector<symbols::OrcTable> tables;
	std::vector<std::string> skipped;	// "NAME: why", for modules without usable tables
};

// kernel: the running kernel's table, whose flags encoding the modules share.
ModuleOrcs load_module_orcs(const ModuleOrcLayout &layout, const symbols::MemoryReader &read,
			    const symbols::OrcTable &kernel, const std::string &modules = "/proc/modules",
			    const std::string &sysfs_modules = "/sys/module");

}  // namespace vtice::console
