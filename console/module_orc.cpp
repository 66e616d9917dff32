// The loaded modules' ORC tables (module_orc.hpp).
#include "module_orc.hpp"

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "hex.hpp"
#include "vtice/escape.hpp"

namespace vtice::console {

namespace {

// A module holds fewer entries than this (the kernel image about 400,000).
constexpr std::uint64_t kMaxModuleEntries = 1u << 20;
// No kernel loads more modules than this (Debian's 6.1 with everything: ~5,000 built).
constexpr std::size_t kMaxModules = 8192;

Result<std::uint64_t> byte_offset(const dbg::btf::Types &types, std::uint32_t module, const char *path)
{
	return member_byte_offset(types, module, "struct module", path);
}

std::vector<std::string> module_names(const std::string &path)
{
	std::vector<std::string> names;
	std::ifstream in(path);
	std::string line;
	while (std::getline(in, line)) {
		std::string name = line.substr(0, line.find(' '));
		if (!name.empty() && name.find('/') == std::string::npos && name != "." && name != "..")
			names.push_back(name);
	}
	return names;
}

Result<std::uint64_t> this_module_address(const std::string &sysfs_modules, const std::string &name)
{
	std::string path = sysfs_modules + "/" + name + "/sections/.gnu.linkonce.this_module";
	std::ifstream in(path);
	std::string text;
	if (!(in >> text))
		return make_error("cannot read " + path);
	char *end = nullptr;
	std::uint64_t address = std::strtoull(text.c_str(), &end, 16);
	if (!end || *end || address == 0)
		return make_error(path + " holds '" + text + "', not an address (kptr_restrict?)");
	return address;
}

}  // namespace

Result<std::uint64_t> member_byte_offset(const dbg::btf::Types &types, std::uint32_t type_id, const char *type_name,
					 const char *path)
{
	auto m = types.member(type_id, path);
	if (!m)
		return make_error(std::string(type_name) + " has no " + path + " in the kernel's BTF: " +
				  m.error().to_string());
	if (m->bit_offset % 8 || m->bitfield_bits)
		return make_error(std::string(type_name) + "'s " + path + " is not byte aligned");
	return m->bit_offset / 8;
}

namespace {

// mem[MOD_TEXT] (MOD_TEXT is 0) since 6.4: its base and size.
Result<std::pair<std::uint64_t, std::uint64_t>> module_memory_text(const dbg::btf::Types &types,
								  const dbg::btf::Member &mem)
{
	std::uint64_t count = 0;
	auto element = types.element(mem.type_id, &count);
	if (!element)
		return make_error("struct module's mem is not an array: " + element.error().to_string());
	auto base = byte_offset(types, *element, "base");
	auto size = byte_offset(types, *element, "size");
	if (!base || !size)
		return (base ? size : base).error();
	return std::pair{mem.bit_offset / 8 + *base, mem.bit_offset / 8 + *size};
}

// Where the module's text starts and its length, as this kernel keeps them.
Result<std::pair<std::uint64_t, std::uint64_t>> text_fields(const dbg::btf::Types &types, std::uint32_t module)
{
	if (auto mem = types.member(module, "mem"))
		return module_memory_text(types, *mem);
	auto base = byte_offset(types, module, "core_layout.base");
	auto size = byte_offset(types, module, "core_layout.text_size");
	if (!base || !size)
		return (base ? size : base).error();
	return std::pair{*base, *size};
}

}  // namespace

Result<ModuleOrcLayout> module_orc_layout(const dbg::btf::Types &types)
{
	auto module = types.find("struct module");
	if (!module)
		return module.error();
	ModuleOrcLayout layout;
	layout.orc = types.member(*module, "arch.orc_unwind_ip").ok();
	if (layout.orc)
		for (auto [field, path] :
		     {std::pair{&layout.ip_table, "arch.orc_unwind_ip"}, std::pair{&layout.entries, "arch.orc_unwind"},
		      std::pair{&layout.count, "arch.num_orcs"}}) {
			auto offset = byte_offset(types, *module, path);
			if (!offset)
				return offset.error();
			*field = *offset;
		}
	auto text = text_fields(types, *module);
	if (!text)
		return text.error();
	layout.text_base = text->first;
	layout.text_size = text->second;
	return layout;
}

Result<ModuleListLayout> module_list_layout(const dbg::btf::Types &types)
{
	auto module = types.find("struct module");
	if (!module)
		return module.error();
	auto list = byte_offset(types, *module, "list");
	if (!list)
		return list.error();
	auto name = types.member(*module, "name");
	if (!name)
		return make_error("struct module has no name in the kernel's BTF: " + name.error().to_string());
	if (name->bit_offset % 8 || !types.is_char_array(name->type_id) || name->size == 0)
		return make_error("struct module's name is not a char array");
	return ModuleListLayout{.list = *list, .name = name->bit_offset / 8, .name_size = name->size};
}

namespace {

// The module's name as its struct holds it, escaped (a hostile kernel's
// bytes reach the analyst's terminal in warnings and frame notes), or its
// address when unreadable.
std::string module_name_at(const ModuleListLayout &list, const symbols::MemoryReader &read, std::uint64_t module)
{
	std::vector<std::uint8_t> raw(list.name_size);
	if (!read(module + list.name, raw))
		return "module at " + dbg::hex(module);
	std::string name(raw.begin(), raw.end());
	return escape_text(name.substr(0, name.find('\0')), Layout::Field);
}

// The module's text, [base, base + size); {0, 0} when not known.
std::pair<std::uint64_t, std::uint64_t> module_text(const ModuleOrcLayout &orc, const symbols::MemoryReader &read,
						    std::uint64_t module)
{
	if (!orc.text_base && !orc.text_size)
		return {0, 0};
	auto base = read_value<std::uint64_t>(read, module + orc.text_base, "text's base");
	auto size = read_value<std::uint32_t>(read, module + orc.text_size, "text's size");
	if (!base || !size || !*base || !*size)
		return {0, 0};
	return {*base, *base + *size};
}

// The module at module: its name, text and ORC tables; without tables
// (a kernel or a module built without them) its name and text alone.
Result<ListedModule> listed_module(const ModuleOrcLayout &orc, const symbols::MemoryReader &read,
				   std::uint64_t module, std::string name)
{
	auto [lo, hi] = module_text(orc, read, module);
	ListedModule listed{std::move(name), 0, 0, 0, lo, hi, module};
	if (!orc.orc)
		return hi ? Result<ListedModule>(std::move(listed)) : make_error("cannot read its text's base and size");
	auto ips = read_value<std::uint64_t>(read, module + orc.ip_table, "arch.orc_unwind_ip");
	auto entries = read_value<std::uint64_t>(read, module + orc.entries, "arch.orc_unwind");
	auto count = read_value<std::uint32_t>(read, module + orc.count, "arch.num_orcs");
	for (const auto *error : {ips.ok() ? nullptr : &ips.error(), entries.ok() ? nullptr : &entries.error(),
				  count.ok() ? nullptr : &count.error()})
		if (error)
			return *error;
	if (*count > kMaxModuleEntries)
		return make_error("arch.num_orcs is " + std::to_string(*count) + ": not believable");
	if (*count && *ips && *entries)
		listed.ip_table = *ips, listed.entries = *entries, listed.count = *count;
	return listed;
}

}  // namespace

ModuleList list_modules(const ModuleOrcLayout &orc, const ModuleListLayout &list, const symbols::MemoryReader &read,
			std::uint64_t modules_head)
{
	ModuleList out;
	std::set<std::uint64_t> seen;
	auto link = read_value<std::uint64_t>(read, modules_head, "first link (the kernel's modules list)");
	while (link && *link != modules_head) {
		if (seen.size() == kMaxModules || !seen.insert(*link).second) {
			out.skipped.push_back("the module list at " + dbg::hex(modules_head) + ": it loops or runs on past " +
					      std::to_string(kMaxModules) + " modules; the rest is not read");
			return out;
		}
		std::uint64_t module = *link - list.list;
		std::string name = module_name_at(list, read, module);
		auto listed = listed_module(orc, read, module, name);
		if (listed)
			out.modules.push_back(std::move(*listed));
		else
			out.skipped.push_back(name + ": " + listed.error().to_string());
		link = read_value<std::uint64_t>(read, *link, "next link (after " + name + ")");
	}
	if (!link)
		out.skipped.push_back("the module list at " + dbg::hex(modules_head) + ": " + link.error().to_string() +
				      "; the rest is not read");
	return out;
}

Result<ListedModule> read_listed_module(const ModuleOrcLayout &orc, const ModuleListLayout &list,
					const symbols::MemoryReader &read, std::uint64_t module)
{
	return listed_module(orc, read, module, module_name_at(list, read, module));
}

Result<symbols::OrcTable> load_listed_module(const ListedModule &module, const symbols::MemoryReader &read,
					     const symbols::OrcTable &kernel)
{
	if (!module.count)
		return make_error("no ORC tables (a module built without objtool's ORC, or a kernel without "
				  "CONFIG_UNWINDER_ORC)");
	auto table = symbols::OrcTable::load(module.ip_table, module.count, module.entries, read, &kernel);
	if (table && module.text_hi)
		table->limit_to(module.text_lo, module.text_hi);
	return table;
}

ModuleOrcs load_module_orcs(const ModuleOrcLayout &layout, const symbols::MemoryReader &read,
			    const symbols::OrcTable &kernel, const std::string &modules, const std::string &sysfs_modules)
{
	ModuleOrcs out;
	for (const std::string &name : module_names(modules)) {
		auto address = this_module_address(sysfs_modules, name);
		auto listed = address ? listed_module(layout, read, *address, name) : Result<ListedModule>(address.error());
		auto table = listed ? load_listed_module(*listed, read, kernel) : Result<symbols::OrcTable>(listed.error());
		if (table)
			out.tables.push_back(std::move(*table));
		else
			out.skipped.push_back(name + ": " + table.error().to_string());
	}
	return out;
}

}  // namespace vtice::console
