// The kernel's own function_graph tracer as vtice doctor's oracle: a few
// openat calls of this process, recorded through tracefs, the tracer left
// as it was found.
#pragma once

#include <string>

#include "vtice/result.hpp"

namespace vtice::console::doctor {

// How many openat calls the oracle records: one call can take a slow path
// the next does not (a slab refill), so a trace is compared with the
// closest of them (graph_calls.hpp).
constexpr int kOracleCalls = 3;

// The function_graph text of kOracleCalls warm openat(path) by this
// process, and nothing else opened while it recorded. An error says why
// there is no oracle: no tracefs, no function_graph in this kernel, or the
// tracer busy with someone else's work (left untouched).
Result<std::string> ftrace_openats(const std::string &path);

}  // namespace vtice::console::doctor
