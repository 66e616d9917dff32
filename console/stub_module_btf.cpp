// A module's BTF from the kernel's memory (stub_module_btf.hpp).
#include "stub_module_btf.hpp"

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

// Where the fields are, from the kernel's BTF.
struct BtfModuleLayout {
	std::uint64_t list = 0, btf = 0;	// in struct btf_module
	std::uint64_t name = 0, name_size = 0, data = 0, data_size = 0;	// in struct btf
};

Result<BtfModuleLayout> btf_module_layout(const dbg::btf::Types &types)
{
	auto module = types.find("struct btf_module");
	auto btf = types.find("struct btf");
	if (!module || !btf)
		return make_error("the kernel's BTF has no struct btf_module or struct btf (a kernel without "
				  "CONFIG_DEBUG_INFO_BTF_MODULES keeps no module's BTF)");
	BtfModuleLayout l;
	auto list = member_byte_offset(types, *module, "struct btf_module", "list");
	auto ptr = member_byte_offset(types, *module, "struct btf_module", "btf");
	auto name = types.member(*btf, "name");
	auto data = member_byte_offset(types, *btf, "struct btf", "data");
	auto size = member_byte_offset(types, *btf, "struct btf", "data_size");
	for (const auto *r : {&list, &ptr, &data, &size})
		if (!*r)
			return r->error();
	if (!name || name->bit_offset % 8 || !types.is_char_array(name->type_id))
		return make_error("struct btf has no char name[] in the kernel's BTF");
	l.list = *list, l.btf = *ptr, l.data = *data, l.data_size = *size;
	l.name = name->bit_offset / 8, l.name_size = name->size;
	return l;
}

class KernelModuleBtf {
public:
	KernelModuleBtf(dbg::Session &session, dbg::Output &log) : session_(session), log_(log) {}

	// The raw BTF the kernel keeps for module, or why there is none.
	Result<std::vector<std::uint8_t>> read(const dbg::btf::Types &kernel, const std::string &module)
	{
		auto layout = btf_module_layout(kernel);
		if (!layout)
			return layout.error();
		const dbg::SymbolSource *symbols = session_.symbols();
		auto head = symbols ? symbols->lookup("btf_modules") : std::nullopt;
		if (!head)
			return make_error("no symbol btf_modules (the kernel's list of modules' BTF) in the session's "
					  "symbols");
		auto node = value(*head, "btf_modules");
		for (unsigned i = 0; node && *node != *head; i++) {
			if (i == kMaxBtfModules)
				return make_error("btf_modules does not end after " + std::to_string(i) + " modules");
			std::uint64_t entry = *node - layout->list;
			auto btf = value(entry + layout->btf, "a btf_module's btf");
			if (!btf)
				return btf.error();
			auto name = session_.read_memory(*btf + layout->name, layout->name_size);
			if (!name)
				return make_error("cannot read a module's BTF name: " + name.error().message);
			if (std::string(reinterpret_cast<const char *>(name->data()),
					strnlen(reinterpret_cast<const char *>(name->data()), name->size())) == module)
				return data_of(*btf, *layout, module);
			node = value(*node, "the next btf_module");
		}
		if (!node)
			return node.error();
		return make_error("the kernel keeps no BTF of module " + module +
				  " (a module built without BTF, or whose BTF the kernel refused)");
	}

private:
	Result<std::uint64_t> value(std::uint64_t address, const std::string &what)
	{
		auto bytes = session_.read_memory(address, 8);
		if (!bytes || bytes->size() != 8)
			return make_error("cannot read " + what + (bytes ? "" : ": " + bytes.error().message));
		std::uint64_t v = 0;
		std::memcpy(&v, bytes->data(), 8);
		return v;
	}

	Result<std::vector<std::uint8_t>> data_of(std::uint64_t btf, const BtfModuleLayout &l, const std::string &module)
	{
		auto data = value(btf + l.data, "module " + module + "'s BTF data");
		auto size = session_.read_memory(btf + l.data_size, 4);
		if (!data || !size || size->size() != 4)
			return make_error("cannot read where module " + module + "'s BTF is");
		std::uint32_t bytes = 0;
		std::memcpy(&bytes, size->data(), 4);
		if (bytes > kMaxModuleBtf)
			return make_error("module " + module + "'s BTF is " + std::to_string(bytes) + " bytes: not BTF");
		std::vector<std::uint8_t> blob;
		blob.reserve(bytes);
		while (blob.size() < bytes) {
			std::size_t chunk = std::min<std::size_t>(kChunk, bytes - blob.size());
			auto part = session_.read_memory(*data + blob.size(), chunk);
			if (!part || part->size() != chunk)
				return make_error("cannot read module " + module + "'s BTF" +
						  (part ? "" : ": " + part.error().message));
			blob.insert(blob.end(), part->begin(), part->end());
			log_.progress("module " + module + "'s BTF: " + size_text(blob.size()) + " of " + size_text(bytes));
		}
		return blob;
	}

	dbg::Session &session_;
	dbg::Output &log_;
};

}  // namespace

ModuleTypesLookup stub_module_types(dbg::Session &session, FunctionModule module_of, dbg::Output &log)
{
	return [&session, &log, module_of = std::move(module_of)](
		       std::string_view function, const dbg::btf::Types &kernel) -> Result<ModuleTypes> {
		std::string name(function);
		auto module = module_of(function);
		if (!module)
			return make_error("no function " + name + " in " + kernel.origin() + "; " + module.error().message);
		auto blob = KernelModuleBtf(session, log).read(kernel, *module);
		if (!blob)
			return make_error(name + " is module " + *module + "'s, and its types cannot be read: " +
					  blob.error().message);
		auto types = dbg::btf::Types::parse_split(*blob, kernel, "module " + *module + "'s BTF in guest memory");
		if (!types)
			return make_error(name + " is module " + *module + "'s, and its types cannot be read: " +
					  types.error().message);
		return ModuleTypes{*module, std::move(*types)};
	};
}

}  // namespace vtice::console
