// The loaded modules' ORC tables, so a kernel stack unwinds through module
// text as the kernel's own unwinder does (arch/x86/kernel/unwind_orc.c
// keeps one sorted table per module in struct module's arch). Each module
// is found by name in /proc/modules, its struct module at the address
// sysfs gives for its .gnu.linkonce.this_module section (the struct is
// that section), the three fields at the offsets the kernel's BTF gives,
// and the tables read through the running kernel's memory.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "btf/btf_types.hpp"
#include "symbols/memory_reader.hpp"
#include "symbols/orc.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

// The byte offset of path ("arch.num_orcs") in the type type_id names
// (type_name, "struct module", for the errors); bit fields are refused.
Result<std::uint64_t> member_byte_offset(const dbg::btf::Types &types, std::uint32_t type_id, const char *type_name,
					 const char *path);

// A T read whole at address, or an error naming what (a field of a module).
template <typename T>
Result<T> read_value(const symbols::MemoryReader &read, std::uint64_t address, const std::string &what)
{
	T value{};
	std::uint8_t raw[sizeof(T)];
	if (!read(address, raw))
		return make_error("cannot read its " + what);
	std::memcpy(&value, raw, sizeof(T));
	return value;
}

// Byte offsets in struct module of arch.orc_unwind_ip, arch.orc_unwind and
// arch.num_orcs (CONFIG_UNWINDER_ORC; a kernel built without it, with frame
// pointers, has none: orc false, and its modules are names and text
// alone), and of its text's start and length (mem[MOD_TEXT].base and .size
// since 6.4, core_layout.base and .text_size before; the length an
// unsigned int; both 0: not known, and a module's table then covers what
// lies between its first and last entries).
struct ModuleOrcLayout {
	bool orc = true;
	std::uint64_t ip_table = 0, entries = 0, count = 0;
	std::uint64_t text_base = 0, text_size = 0;
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

// Where struct module keeps its link in the kernel's list of modules
// (list, a struct list_head) and its name (char name[MODULE_NAME_LEN]).
struct ModuleListLayout {
	std::uint64_t list = 0, name = 0, name_size = 0;
};

Result<ModuleListLayout> module_list_layout(const dbg::btf::Types &types);

// A module found through kernel memory alone, for a kernel whose /proc and
// sysfs the console cannot read (through the debug stub): its name, where
// its tables are, and its text, so that a slow line carries a module's
// tables only once a stack needs them.
struct ListedModule {
	std::string name;
	std::uint64_t ip_table = 0, entries = 0, count = 0;	// count 0: it has no ORC tables
	std::uint64_t text_lo = 0, text_hi = 0;	// [lo, hi): its text, which its table is limited to
	std::uint64_t address = 0;	// its struct module

	// Two listings of one load: a module unloaded and another (or a
	// rebuild of it) loaded where it was has another name, text size or
	// ORC table.
	auto operator<=>(const ListedModule &) const = default;
};

struct ModuleList {
	std::vector<ListedModule> modules;
	std::vector<std::string> skipped;	// "NAME: why", and why a walk ended early
};

// The list the kernel's `modules` (a struct list_head at modules_head)
// starts, walked through read. A walk that cannot go on (an unreadable
// link, a loop, more modules than any kernel loads) ends with what it found
// and says why in skipped.
ModuleList list_modules(const ModuleOrcLayout &orc, const ModuleListLayout &list, const symbols::MemoryReader &read,
			std::uint64_t modules_head);
// The module whose struct module is at module, as a walk of the list reads it.
Result<ListedModule> read_listed_module(const ModuleOrcLayout &orc, const ModuleListLayout &list,
					const symbols::MemoryReader &read, std::uint64_t module);
// Its table, limited to its text; kernel: the running kernel's, whose flags
// encoding it shares. An error for a module without tables.
Result<symbols::OrcTable> load_listed_module(const ListedModule &module, const symbols::MemoryReader &read,
					     const symbols::OrcTable &kernel);

}  // namespace vtice::console
