// args->NAME in fn: probes: a kernel function's parameters from the
// running kernel's BTF (/sys/kernel/btf/vmlinux), or a loaded module's
// from the module's BTF, and the types reads through them go by, as the
// probe checker asks for them.
#pragma once

#include <memory>
#include <optional>

#include "checker.hpp"
#include "kernel_btf.hpp"
#include "module_btf.hpp"

namespace vtice::console {

// The types one probe program is checked against: the kernel's, and those
// of at most one module whose function it reads arguments of. A module's
// BTF is split on the kernel's (its ids go on from the kernel's, which keep
// their meaning), so once a module is taken every answer comes from its
// types; a second module's ids would collide with the first's.
class ProbeTypes {
public:
	explicit ProbeTypes(std::shared_ptr<KernelBtf> kernel, ModuleTypesLookup modules = {})
		: kernel_(std::move(kernel)), modules_(std::move(modules))
	{
	}

	// The kernel's types (loaded on the first question, KernelBtf: once).
	Result<const dbg::btf::Types *> kernel() { return kernel_->types(); }
	// The taken module's types, else the kernel's; null when none loaded.
	const dbg::btf::Types *current();
	// Where a function's prototype is: the types, and which of their
	// functions of that name is meant.
	struct FunctionTypes {
		const dbg::btf::Types *types;
		dbg::btf::Types::Among among;
	};
	// The types that have function (NAME or MODULE:NAME): the kernel's, or
	// its module's (taken now, if no other module is), or why neither.
	// NAME alone is the kernel's when its BTF has it (as fn:NAME's address
	// is the kernel's), vmlinux:NAME only the kernel's.
	Result<FunctionTypes> of_function(std::string_view function);

private:
	Result<FunctionTypes> of_module_function(std::string_view function, std::string_view module,
						 const dbg::btf::Types &kernel);

	std::shared_ptr<KernelBtf> kernel_;
	ModuleTypesLookup modules_;
	std::optional<ModuleTypes> module_;
};

// Every answer after a failed load of the kernel's BTF repeats why it failed.
probes::ParamLookup kernel_params(std::shared_ptr<ProbeTypes> types);

// Types for reads through arguments (args->how->flags), from the same BTF.
std::unique_ptr<probes::KernelTypes> kernel_types(std::shared_ptr<ProbeTypes> types);

}  // namespace vtice::console
