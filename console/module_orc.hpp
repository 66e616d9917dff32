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

// Where struct module keeps its link in the kernel's list `modules` and its name.
struct ModuleListLayout {
	std::uint64_t list = 0, name = 0;
};

Result<ModuleListLayout> module_list_layout(const dbg::btf::Types &types);

// A list the walk gives up on past this many modules (a loop, or a lie).
constexpr std::size_t kMaxListedModules = 4096;

// Through a debugger, with no /proc or sysfs to ask: the modules found by
// walking the kernel's list `modules` (its list_head at head) in guest
// memory, each one's tables read as above. A walk that cannot go on says
// why in skipped and keeps what it found.
ModuleOrcs load_listed_module_orcs(const ModuleOrcLayout &layout, const ModuleListLayout &list,
				   const symbols::MemoryReader &read, const symbols::OrcTable &kernel,
				   std::uint64_t head);

}  // namespace vtice::console
