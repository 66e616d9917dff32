// args->NAME in fn: probes: a kernel function's parameters from the
// running kernel's BTF (/sys/kernel/btf/vmlinux), and the types reads
// through them go by, as the probe checker asks for them.
#pragma once

#include <memory>

#include "checker.hpp"
#include "kernel_btf.hpp"

namespace vtice::console {

// Loads the BTF on the first question (KernelBtf: once); every answer
// after a failed load repeats why it failed.
probes::ParamLookup kernel_params(std::shared_ptr<KernelBtf> btf);

// Types for reads through arguments (args->how->flags), from the same BTF.
std::unique_ptr<probes::KernelTypes> kernel_types(std::shared_ptr<KernelBtf> btf);

}  // namespace vtice::console
