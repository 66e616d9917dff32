// args->NAME in fn: probes: a kernel function's parameters from the
// running kernel's BTF (/sys/kernel/btf/vmlinux), as the probe checker
// asks for them.
#pragma once

#include <string>

#include "checker.hpp"

namespace vtice::console {

// Loads the BTF at btf_path on the first question, once; every answer
// after a failed load repeats why it failed.
probes::ParamLookup kernel_params(std::string btf_path);

}  // namespace vtice::console
