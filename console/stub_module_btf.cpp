// A module's BTF from the kernel's memory (stub_module_btf.hpp).
#include "stub_module_btf.hpp"

#include <algorithm>
#include <cstring>

#include "module_orc.hpp"

namespace vtice::console {
namespace {

constexpr unsigned kMaxBtfModules = 4096;	// more list nodes than modules can be loaded: a loop
constexpr std::uint32_t kMaxModuleBtf = 32u << 20;	// the biggest module's (amdgpu) is a few MiB
constexpr std::size_t kChunk = 64u << 10;

// "551 bytes", "1500 KiB".
std::string size_text(std::uint64_t bytes)
{
	return bytes < (64u << 10) ? std::to_string(bytes) + " bytes" : std::to_string(bytes >> 10) + " KiB";
}

// btf's name, as the kernel keeps it (NUL-terminated within name_size).
Result<std::string> name_of(const BtfModuleLayout &l, const symbols::MemoryReader &read, std::uint64_t btf)
{
	std::vector<std::uint8_t> raw(l.name_size);
	if (!read(btf + l.name, raw))
		return make_error("cannot read a module's BTF name");
	auto *chars = reinterpret_cast<const char *>(raw.data());
	return std::string(chars, strnlen(chars, raw.size()));
}

Result<std::vector<std::uint8_t>> data_of(const BtfModuleLayout &l, const symbols::MemoryReader &read,
					  std::uint64_t btf, const std::string &module, const BytesProgress &progress)
{
	auto data = read_value<std::uint64_t>(read, btf + l.data, "module " + module + "'s BTF data");
	auto size = read_value<std::uint32_t>(read, btf + l.data_size, "module " + module + "'s BTF size");
	if (!data || !size)
		return make_error("cannot read where module " + module + "'s BTF is");
	if (*size > kMaxModuleBtf)
		return make_error("module " + module + "'s BTF is " + std::to_string(*size) + " bytes: not BTF");
	std::vector<std::uint8_t> blob(*size);
	for (std::size_t done = 0; done < blob.size();) {
		std::size_t chunk = std::min<std::size_t>(kChunk, blob.size() - done);
		if (!read(*data + done, std::span<std::uint8_t>(blob.data() + done, chunk)))
			return make_error("cannot read module " + module + "'s BTF");
		done += chunk;
		if (progress)
			progress(done, blob.size());
	}
	return blob;
}

}  // namespace

Result<BtfModuleLayout> btf_module_layout(const dbg::btf::Types &kernel)
{
	auto module = kernel.find("struct btf_module");
	auto btf = kernel.find("struct btf");
	if (!module || !btf)
		return make_error("the kernel's BTF has no struct btf_module or struct btf (a kernel without "
				  "CONFIG_DEBUG_INFO_BTF_MODULES keeps no module's BTF)");
	auto list = member_byte_offset(kernel, *module, "struct btf_module", "list");
	auto ptr = member_byte_offset(kernel, *module, "struct btf_module", "btf");
	auto data = member_byte_offset(kernel, *btf, "struct btf", "data");
	auto size = member_byte_offset(kernel, *btf, "struct btf", "data_size");
	for (const auto *r : {&list, &ptr, &data, &size})
		if (!*r)
			return r->error();
	auto name = kernel.member(*btf, "name");
	if (!name || name->bit_offset % 8 || !kernel.is_char_array(name->type_id))
		return make_error("struct btf has no char name[] in the kernel's BTF");
	return BtfModuleLayout{*list, *ptr, name->bit_offset / 8, name->size, *data, *size};
}

Result<std::vector<std::uint8_t>> read_kept_module_btf(const BtfModuleLayout &layout, const symbols::MemoryReader &read,
						       std::uint64_t head, const std::string &module,
						       const BytesProgress &progress)
{
	auto node = read_value<std::uint64_t>(read, head, "list btf_modules");
	for (unsigned i = 0; node && *node != head; i++) {
		if (i == kMaxBtfModules)
			return make_error("btf_modules does not end after " + std::to_string(i) + " modules");
		auto btf = read_value<std::uint64_t>(read, *node - layout.list + layout.btf, "btf_module's btf");
		if (!btf)
			return btf.error();
		auto name = name_of(layout, read, *btf);
		if (!name)
			return name.error();
		if (*name == module)
			return data_of(layout, read, *btf, module, progress);
		node = read_value<std::uint64_t>(read, *node, "next btf_module");
	}
	if (!node)
		return make_error("btf_modules: " + node.error().message);
	return make_error("the kernel keeps no BTF of module " + module +
			  " (a module built without BTF, or whose BTF the kernel refused)");
}

ModuleTypesLookup stub_module_types(dbg::Session &session, FunctionModule module_of, dbg::Output &log)
{
	return [&session, &log, module_of = std::move(module_of)](
		       std::string_view function, std::string_view named,
		       const dbg::btf::Types &kernel) -> Result<ModuleTypes> {
		std::string name(function);
		auto module = module_of(function, named);
		if (!module)
			return make_error("no function " + name + " in " + kernel.origin() + "; " + module.error().message);
		auto fail = [&](const Error &e) {
			return make_error(name + " is module " + *module + "'s, and its types cannot be read: " + e.message);
		};
		auto layout = btf_module_layout(kernel);
		if (!layout)
			return fail(layout.error());
		const dbg::SymbolSource *symbols = session.symbols();
		auto head = symbols ? symbols->lookup("btf_modules") : std::nullopt;
		if (!head)
			return fail(make_error("no symbol btf_modules (the kernel's list of modules' BTF) in the "
					       "session's symbols"));
		auto blob = read_kept_module_btf(*layout, session.memory_reader(), *head, *module, [&](std::uint64_t done, std::uint64_t all) {
			log.progress("module " + *module + "'s BTF: " + size_text(done) + " of " + size_text(all));
		});
		if (!blob)
			return fail(blob.error());
		auto types = dbg::btf::Types::parse_split(*blob, kernel, "module " + *module + "'s BTF in guest memory");
		if (!types)
			return fail(types.error());
		return ModuleTypes{*module, std::move(*types)};
	};
}

}  // namespace vtice::console
