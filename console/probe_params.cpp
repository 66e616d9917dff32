// args->NAME: parameters from the kernel's BTF (probe_params.hpp).
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

}  // namespace

probes::ParamLookup kernel_params(std::shared_ptr<KernelBtf> btf)
{
	return [btf](std::string_view function) -> Result<std::vector<probes::Param>> {
		auto types = btf->types();
		if (!types)
			return make_error("no kernel BTF to name arguments by (" + types.error().to_string() +
					  "); read argN, or give --btf FILE");
		auto params = (*types)->function_params(function);
		if (!params)
			return params.error();
		std::vector<probes::Param> out;
		for (const auto &p : *params)
			out.push_back(describe(**types, p));
		return out;
	};
}

}  // namespace vtice::console
