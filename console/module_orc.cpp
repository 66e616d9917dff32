// The loaded modules' ORC tables (module_orc.hpp).
#include "module_orc.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

namespace vtice::console {

namespace {

// A module holds fewer entries than this (the kernel image about 400,000).
constexpr std::uint64_t kMaxModuleEntries = 1u << 20;

Result<std::uint64_t> byte_offset(const dbg::btf::Types &types, std::uint32_t module, const char *path)
{
	auto m = types.member(module, path);
	if (!m)
		return make_error(std::string("struct module has no ") + path + " in the kernel's BTF: " +
				  m.error().to_string());
	if (m->bit_offset % 8 || m->bitfield_bits)
		return make_error(std::string("struct module's ") + path + " is not byte aligned");
	return m->bit_offset / 8;
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

template <typename T>
Result<T> read_value(const symbols::MemoryReader &read, std::uint64_t address, const char *what)
{
	T value{};
	std::uint8_t raw[sizeof(T)];
	if (!read(address, raw))
		return make_error(std::string("cannot read its ") + what);
	std::memcpy(&value, raw, sizeof(T));
	return value;
}

Result<symbols::OrcTable> one_module(const ModuleOrcLayout &layout, const symbols::MemoryReader &read,
				     const symbols::OrcTable &kernel, std::uint64_t module)
{
	auto ips = read_value<std::uint64_t>(read, module + layout.ip_table, "arch.orc_unwind_ip");
	auto entries = read_value<std::uint64_t>(read, module + layout.entries, "arch.orc_unwind");
	auto count = read_value<std::uint32_t>(read, module + layout.count, "arch.num_orcs");
	for (const auto *error : {ips.ok() ? nullptr : &ips.error(), entries.ok() ? nullptr : &entries.error(),
				  count.ok() ? nullptr : &count.error()})
		if (error)
			return *error;
	if (*count == 0 || !*ips || !*entries)
		return make_error("no ORC tables (a module built without objtool's ORC?)");
	if (*count > kMaxModuleEntries)
		return make_error("arch.num_orcs is " + std::to_string(*count) + ": not believable");
	return symbols::OrcTable::load(*ips, *count, *entries, read, &kernel);
}

}  // namespace

Result<ModuleOrcLayout> module_orc_layout(const dbg::btf::Types &types)
{
	auto module = types.find("struct module");
	if (!module)
		return module.error();
	ModuleOrcLayout layout;
	for (auto [field, path] : {std::pair{&layout.ip_table, "arch.orc_unwind_ip"},
				   std::pair{&layout.entries, "arch.orc_unwind"}, std::pair{&layout.count, "arch.num_orcs"}}) {
		auto offset = byte_offset(types, *module, path);
		if (!offset)
			return offset.error();
		*field = *offset;
	}
	return layout;
}

ModuleOrcs load_module_orcs(const ModuleOrcLayout &layout, const symbols::MemoryReader &read,
			    const symbols::OrcTable &kernel, const std::string &modules, const std::string &sysfs_modules)
{
	ModuleOrcs out;
	for (const std::string &name : module_names(modules)) {
		auto address = this_module_address(sysfs_modules, name);
		auto table = address ? one_module(layout, read, kernel, *address) : Result<symbols::OrcTable>(address.error());
		if (table)
			out.tables.push_back(std::move(*table));
		else
			out.skipped.push_back(name + ": " + table.error().to_string());
	}
	return out;
}

}  // namespace vtice::console
