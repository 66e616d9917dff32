// args->NAME in fn: probes: a kernel function's parameters from the
// running kernel's BTF (/sys/kernel/btf/vmlinux), or a loaded module's
// from the module's BTF, and the types reads through them go by, as the
// probe checker asks for them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "checker.hpp"
#include "point_patterns.hpp"
#include "kernel_btf.hpp"
#include "module_btf.hpp"

namespace vtice::console {

// The types one probe program is checked against: the kernel's, and those
// of each module whose functions it reads arguments of. A module's BTF is
// split on the kernel's: ids below the kernel's count are the kernel's in
// every module, and each module's own ids go on from there, so two
// modules' own ids collide. The checker sees one space of ids: the
// kernel's as they are, and the k-th module's own moved up by
// (k + 1) * kModuleIdStride.
class ProbeTypes {
public:
	explicit ProbeTypes(std::shared_ptr<KernelBtf> kernel, ModuleTypesLookup modules = {})
		: kernel_(std::move(kernel)), modules_(std::move(modules))
	{
	}

	// Far above any kernel's count of types (~150,000 in 6.12), and room
	// for kMaxModules modules in 32 bits.
	static constexpr std::uint32_t kModuleIdStride = 1u << 24;
	static constexpr std::size_t kMaxModules = 255;

	// The kernel's types (loaded on the first question, KernelBtf: once).
	Result<const dbg::btf::Types *> kernel() { return kernel_->types(); }

	// A type the checker names by id: the types that hold it and its id there.
	struct Local {
		const dbg::btf::Types *types;
		std::uint32_t id;
	};
	// Nothing when the kernel's types did not load, or for an id of no module.
	std::optional<Local> local(std::uint32_t id);
	// The id the checker sees for types' own id.
	std::uint32_t global(const dbg::btf::Types &types, std::uint32_t id);

	// Where a function's prototype is: the types, and which of their
	// functions of that name is meant.
	struct FunctionTypes {
		const dbg::btf::Types *types;
		dbg::btf::Types::Among among;
	};
	// The types that have function (NAME or MODULE:NAME): the kernel's, or
	// its module's (taken now, if not yet), or why neither. NAME alone is
	// the kernel's when its BTF has it (as fn:NAME's address is the
	// kernel's), vmlinux:NAME only the kernel's.
	Result<FunctionTypes> of_function(std::string_view function);
	// "struct msr_data": the kernel's first, then each module's taken, then
	// those of the lenders' modules (taken now), in the program's order.
	Result<std::uint32_t> find(std::string_view name);
	// A cast names a type with no function to say whose: the modules of the
	// program's fn: and addr:NAME points lend theirs, read only if a type
	// is not found in the kernel's or the modules taken for args->.
	void lend_types_of(const probes::Program &program);

private:
	Result<FunctionTypes> of_module_function(std::string_view function, std::string_view module,
						 const dbg::btf::Types &kernel);

	std::shared_ptr<KernelBtf> kernel_;
	ModuleTypesLookup modules_;
	// Each module's types stay where they are: others hold their address.
	std::vector<std::unique_ptr<ModuleTypes>> taken_;
	std::vector<std::string> lenders_;	// fn: and addr: points' functions not yet asked, the first last
};

// Every answer after a failed load of the kernel's BTF repeats why it failed.
probes::ParamLookup kernel_params(std::shared_ptr<ProbeTypes> types);

// Types for reads through arguments (args->how->flags), from the same BTF.
std::unique_ptr<probes::KernelTypes> kernel_types(std::shared_ptr<ProbeTypes> types);

// A program parsed, its points' patterns expanded against functions
// (point_patterns.hpp), its fn: and addr: points made lenders of types, and
// checked against types (syscall names from the tracer's table, their
// arguments' from syscall_params: syscall_params.hpp).
Result<probes::CheckedProgram> compile_typed_program(std::string_view source, std::shared_ptr<ProbeTypes> types,
						     const probes::SyscallParamLookup &syscall_params = {},
						     const FunctionNames &functions = {});

}  // namespace vtice::console
