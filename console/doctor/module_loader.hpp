// Loading and unloading vtice.ko for vtice doctor: finit_module and
// delete_module directly (no kmod tools needed), and where the module file
// is looked for.
#pragma once

#include <string>

#include "vtice/result.hpp"

namespace vtice::console::doctor {

// Whether a module named vtice is loaded now (/sys/module/vtice).
bool module_loaded();

// The module file: the one given, else the installed one under
// /lib/modules/RELEASE (DKMS's updates/dkms/ first), else the build tree's
// hypervisor/vtice.ko next to this vtice binary. The error lists where it looked.
Result<std::string> find_module(const std::string &given);

// finit_module(2) with the parameters ("" for the defaults). A compressed
// file (.ko.xz, .ko.zst, .ko.gz) is left to the kernel to decompress.
Result<void> load_module(const std::string &path, const std::string &params);

// delete_module(2), waiting up to timeout_ms while the module is busy.
Result<void> unload_module(int timeout_ms = 10000);

}  // namespace vtice::console::doctor
