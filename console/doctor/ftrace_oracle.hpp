// The kernel's own function_graph tracer as vtice doctor's oracle: one
// openat of this process, recorded through tracefs, the tracer left as it
// was found.
#pragma once

#include <string>

#include "vtice/result.hpp"

namespace vtice::console::doctor {

// The function_graph text of one warm openat(path) by this process. An
// error says why there is no oracle: no tracefs, no function_graph in this
// kernel, or the tracer busy with someone else's work (left untouched).
Result<std::string> ftrace_one_openat(const std::string &path);

}  // namespace vtice::console::doctor
