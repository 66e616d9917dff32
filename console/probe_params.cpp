// args->NAME and reads through arguments: the kernel's or a module's BTF (probe_params.hpp).
#include "probe_params.hpp"

#include <memory>

namespace vtice::console {
namespace {

// How much of its register a parameter's value is: a pointer or an integer
// (an enum, a bool) fits one; a struct or a float does not (bytes 0).
probes::Param describe(const dbg::btf::Types &types, const dbg::btf::Types::Param &p)
{
	probes::Param out;
	out.name = p.name;
	out.type = types.name_of(p.type_id);
	out.type_id = p.type_id;
	if (types.is_pointer(p.type_id)) {
		out.bytes = 8;
	} else if (auto scalar = types.scalar(p.type_id); scalar && scalar->bytes <= 8) {
		out.bytes = scalar->bytes;
		out.is_signed = scalar->is_signed;
	} else {
		out.bytes = 0;
	}
	return out;
}

// Every answer after a failed load is "none": the checker asks for
// parameters or a struct first, and those say why.
class BtfTypes final : public probes::KernelTypes {
public:
	explicit BtfTypes(std::shared_ptr<ProbeTypes> types) : types_(std::move(types)) {}

	Result<std::uint32_t> find(std::string_view name) const override
	{
		auto kernel = types_->kernel();
		if (!kernel)
			return make_error("no kernel BTF to find " + std::string(name) + " in (" +
					  kernel.error().to_string() + "); give --btf FILE");
		return types_->current()->find(name);
	}

	std::optional<std::uint32_t> pointee(std::uint32_t type_id) const override
	{
		const auto *t = loaded();
		auto to = t ? t->pointee(type_id) : Result<std::uint32_t>(make_error(""));
		return to ? std::optional<std::uint32_t>(*to) : std::nullopt;
	}

	Result<Field> field(std::uint32_t type_id, std::string_view name) const override
	{
		const auto *t = loaded();
		if (!t)
			return make_error("no kernel BTF");
		auto m = t->member(type_id, name);
		if (!m)
			return m.error();
		return Field{m->bit_offset / 8, m->type_id, static_cast<std::uint32_t>(m->bit_offset % 8),
			     m->bitfield_bits};
	}

	std::optional<Array> array(std::uint32_t type_id) const override
	{
		const auto *t = loaded();
		std::uint64_t count = 0;
		auto element = t ? t->element(type_id, &count) : Result<std::uint32_t>(make_error(""));
		return element ? std::optional<Array>(Array{*element, count}) : std::nullopt;
	}

	std::optional<std::uint64_t> size(std::uint32_t type_id) const override
	{
		const auto *t = loaded();
		auto bytes = t ? t->size_of(type_id) : Result<std::uint64_t>(make_error(""));
		return bytes && *bytes ? std::optional<std::uint64_t>(*bytes) : std::nullopt;
	}

	std::optional<Scalar> scalar(std::uint32_t type_id) const override
	{
		const auto *t = loaded();
		if (!t)
			return std::nullopt;
		if (t->is_pointer(type_id))
			return Scalar{8, false};
		auto s = t->scalar(type_id);
		if (!s || (s->bytes != 1 && s->bytes != 2 && s->bytes != 4 && s->bytes != 8))
			return std::nullopt;
		return Scalar{s->bytes, s->is_signed};
	}

	bool is_char_array(std::uint32_t type_id) const override
	{
		const auto *t = loaded();
		return t && t->is_char_array(type_id);
	}

	bool is_struct(std::uint32_t type_id) const override
	{
		const auto *t = loaded();
		return t && t->is_composite(type_id);
	}

	std::string name(std::uint32_t type_id) const override
	{
		const auto *t = loaded();
		return t ? t->name_of(type_id) : "type " + std::to_string(type_id);
	}

	std::optional<std::uint32_t> return_type(std::string_view function) const override
	{
		auto t = types_->of_function(function);
		auto type = t ? (*t)->function_return(function) : Result<std::uint32_t>(make_error(""));
		return type && *type ? std::optional<std::uint32_t>(*type) : std::nullopt;
	}

private:
	const dbg::btf::Types *loaded() const { return types_->current(); }

	std::shared_ptr<ProbeTypes> types_;
};

}  // namespace

const dbg::btf::Types *ProbeTypes::current()
{
	if (module_)
		return &module_->types;
	auto kernel = kernel_->types();
	return kernel ? *kernel : nullptr;
}

Result<const dbg::btf::Types *> ProbeTypes::of_function(std::string_view function)
{
	auto kernel = kernel_->types();
	if (!kernel)
		return kernel.error();
	const dbg::btf::Types *now = current();
	auto has = now->function_return(function);
	if (has || !modules_)
		return has ? Result<const dbg::btf::Types *>(now) : has.error();
	auto found = modules_(function, **kernel);
	if (!found)
		return found.error();
	if (module_ && found->module != module_->module)
		return make_error(std::string(function) + " is module " + found->module + "'s, and this program reads " +
				  "arguments of module " + module_->module + "'s functions already: one module's types " +
				  "a program");
	module_.emplace(std::move(*found));
	return &module_->types;
}

std::unique_ptr<probes::KernelTypes> kernel_types(std::shared_ptr<ProbeTypes> types)
{
	return std::make_unique<BtfTypes>(std::move(types));
}

probes::ParamLookup kernel_params(std::shared_ptr<ProbeTypes> types)
{
	return [types](std::string_view function) -> Result<std::vector<probes::Param>> {
		if (auto kernel = types->kernel(); !kernel)
			return make_error("no kernel BTF to name arguments by (" + kernel.error().to_string() +
					  "); read argN, or give --btf FILE");
		auto in = types->of_function(function);
		if (!in)
			return in.error();
		auto params = (*in)->function_params(function);
		if (!params)
			return params.error();
		std::vector<probes::Param> out;
		for (const auto &p : *params)
			out.push_back(describe(**in, p));
		return out;
	};
}

}  // namespace vtice::console
