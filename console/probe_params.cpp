// args->NAME and reads through arguments: the kernel's or a module's BTF (probe_params.hpp).
#include "probe_params.hpp"

#include <algorithm>
#include <memory>

#include "parser.hpp"
#include "syscall_events.hpp"

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

// NAME of MODULE:NAME.
std::string_view unqualified(std::string_view function)
{
	auto colon = function.rfind(':');
	return colon == std::string_view::npos ? function : function.substr(colon + 1);
}

// Every answer after a failed load is "none": the checker asks for
// parameters or a struct first, and those say why. Ids in and out are
// ProbeTypes' single space of them.
class BtfTypes final : public probes::KernelTypes {
public:
	explicit BtfTypes(std::shared_ptr<ProbeTypes> types) : types_(std::move(types)) {}

	Result<std::uint32_t> find(std::string_view name) const override { return types_->find(name); }

	std::optional<std::uint32_t> pointee(std::uint32_t type_id) const override
	{
		auto t = types_->local(type_id);
		auto to = t ? t->types->pointee(t->id) : Result<std::uint32_t>(make_error(""));
		return to ? std::optional<std::uint32_t>(types_->global(*t->types, *to)) : std::nullopt;
	}

	Result<Field> field(std::uint32_t type_id, std::string_view name) const override
	{
		auto t = types_->local(type_id);
		if (!t)
			return make_error("no kernel BTF");
		auto m = t->types->member(t->id, name);
		if (!m)
			return m.error();
		return Field{m->bit_offset / 8, types_->global(*t->types, m->type_id),
			     static_cast<std::uint32_t>(m->bit_offset % 8), m->bitfield_bits};
	}

	std::optional<Array> array(std::uint32_t type_id) const override
	{
		auto t = types_->local(type_id);
		std::uint64_t count = 0;
		auto element = t ? t->types->element(t->id, &count) : Result<std::uint32_t>(make_error(""));
		return element ? std::optional<Array>(Array{types_->global(*t->types, *element), count})
			       : std::nullopt;
	}

	std::optional<std::uint64_t> size(std::uint32_t type_id) const override
	{
		auto t = types_->local(type_id);
		auto bytes = t ? t->types->size_of(t->id) : Result<std::uint64_t>(make_error(""));
		return bytes && *bytes ? std::optional<std::uint64_t>(*bytes) : std::nullopt;
	}

	std::optional<Scalar> scalar(std::uint32_t type_id) const override
	{
		auto t = types_->local(type_id);
		if (!t)
			return std::nullopt;
		if (t->types->is_pointer(t->id))
			return Scalar{8, false};
		auto s = t->types->scalar(t->id);
		if (!s || (s->bytes != 1 && s->bytes != 2 && s->bytes != 4 && s->bytes != 8))
			return std::nullopt;
		return Scalar{s->bytes, s->is_signed};
	}

	bool is_char_array(std::uint32_t type_id) const override
	{
		auto t = types_->local(type_id);
		return t && t->types->is_char_array(t->id);
	}

	bool is_struct(std::uint32_t type_id) const override
	{
		auto t = types_->local(type_id);
		return t && t->types->is_composite(t->id);
	}

	std::string name(std::uint32_t type_id) const override
	{
		auto t = types_->local(type_id);
		return t ? t->types->name_of(t->id) : "type " + std::to_string(type_id);
	}

	std::optional<std::uint32_t> return_type(std::string_view function) const override
	{
		auto t = types_->of_function(function);
		auto type = t ? t->types->function_return(unqualified(function), t->among)
			      : Result<std::uint32_t>(make_error(""));
		return type && *type ? std::optional<std::uint32_t>(types_->global(*t->types, *type)) : std::nullopt;
	}

private:
	std::shared_ptr<ProbeTypes> types_;
};

}  // namespace

std::optional<ProbeTypes::Local> ProbeTypes::local(std::uint32_t id)
{
	auto kernel = kernel_->types();
	if (!kernel)
		return std::nullopt;
	if (id < kModuleIdStride)
		return Local{*kernel, id};
	std::size_t k = id / kModuleIdStride - 1;
	if (k >= taken_.size())
		return std::nullopt;
	return Local{&taken_[k]->types, id % kModuleIdStride};
}

std::uint32_t ProbeTypes::global(const dbg::btf::Types &types, std::uint32_t id)
{
	auto kernel = kernel_->types();
	if (kernel && id < (*kernel)->count())
		return id;	// the kernel's, in every module's types too
	for (std::size_t k = 0; k < taken_.size(); k++)
		if (&taken_[k]->types == &types)
			return id + static_cast<std::uint32_t>(k + 1) * kModuleIdStride;
	return id;
}

Result<std::uint32_t> ProbeTypes::find(std::string_view name)
{
	auto kernel = kernel_->types();
	if (!kernel)
		return make_error("no kernel BTF to find " + std::string(name) + " in (" + kernel.error().to_string() +
				  "); give --btf FILE");
	auto id = (*kernel)->find(name);
	for (const auto &module : taken_) {
		if (id)
			break;
		if (auto own = module->types.find(name))
			id = global(module->types, *own);
	}
	// The probe points' modules, taken only now that a type needs them.
	while (!id && !lenders_.empty()) {
		std::string function = std::move(lenders_.back());
		lenders_.pop_back();
		auto in = of_function(function);
		if (in && in->types != *kernel)
			if (auto own = in->types->find(name))
				id = global(*in->types, *own);
	}
	return id;
}

void ProbeTypes::lend_types_of(const probes::Program &program)
{
	lenders_ = probes::function_points(program);
	std::reverse(lenders_.begin(), lenders_.end());
}

Result<probes::CheckedProgram> compile_typed_program(std::string_view source, std::shared_ptr<ProbeTypes> types,
						     const probes::SyscallParamLookup &syscall_params,
						     const FunctionNames &functions)
{
	auto program = probes::parse_program(source);
	if (!program)
		return program.error();
	if (auto expanded = expand_program_patterns(*program, functions); !expanded)
		return expanded.error();
	types->lend_types_of(*program);
	auto kernel = kernel_types(types);
	return probes::check_program(
		std::move(*program), [](std::string_view name) { return trace::syscall_number(name); },
		kernel_params(types), kernel.get(), syscall_params);
}

Result<ProbeTypes::FunctionTypes> ProbeTypes::of_function(std::string_view function)
{
	auto kernel = kernel_->types();
	if (!kernel)
		return kernel.error();
	auto colon = function.rfind(':');
	std::string_view module = colon == std::string_view::npos ? std::string_view() : function.substr(0, colon);
	std::string_view name = unqualified(function);
	if (module == probes::kVmlinux || module.empty()) {
		auto has = (*kernel)->function_return(name);
		if (has || module == probes::kVmlinux || !modules_)
			return has ? Result<FunctionTypes>(FunctionTypes{*kernel, dbg::btf::Types::Among::All})
				   : has.error();
	}
	return of_module_function(name, module, **kernel);
}

Result<ProbeTypes::FunctionTypes> ProbeTypes::of_module_function(std::string_view function, std::string_view module,
								 const dbg::btf::Types &kernel)
{
	// A module taken already has it: no second read of kallsyms and BTF.
	for (const auto &taken : taken_)
		if (module == taken->module ||
		    (module.empty() && taken->types.function_return(function, dbg::btf::Types::Among::Own)))
			return FunctionTypes{&taken->types, dbg::btf::Types::Among::Own};
	if (taken_.size() == kMaxModules)
		return make_error("this program reads arguments of " + std::to_string(kMaxModules) +
				  " modules' functions already, the most one program may");
	auto found = modules_ ? modules_(function, module, kernel)
			      : Result<ModuleTypes>(make_error("no module's types here (" + std::string(module) + ")"));
	if (!found)
		return found.error();
	taken_.push_back(std::make_unique<ModuleTypes>(std::move(*found)));
	return FunctionTypes{&taken_.back()->types, dbg::btf::Types::Among::Own};
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
		auto params = in->types->function_params(unqualified(function), in->among);
		if (!params)
			return params.error();
		std::vector<probes::Param> out;
		for (const auto &p : *params) {
			out.push_back(describe(*in->types, p));
			out.back().type_id = types->global(*in->types, p.type_id);
		}
		return out;
	};
}

}  // namespace vtice::console
