// libFuzzer target: vtice doctor's reading of function graphs. The ftrace
// text comes from the kernel under test, which may be hostile; the input is
// split at its first NUL into that text and a vtice graph. Promises: no
// crash, bounded memory (the comparison's table is capped), every call
// name non-empty, and the closest match's counts consistent with one of
// the oracle calls.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "doctor/graph_calls.hpp"

using namespace vtice::console::doctor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	std::string_view input(reinterpret_cast<const char *>(data), size);
	std::size_t split = input.find('\0');
	std::string_view ftrace = input.substr(0, split);
	std::string_view ours = split == std::string_view::npos ? input : input.substr(split + 1);
	auto oracles = ftrace_calls(ftrace, "do_sys_openat2");
	auto traced = vtice_calls(ours);
	oracles.push_back(traced);	// every list, for the name check
	for (const auto &calls : oracles)
		for (const std::string &name : calls)
			if (name.empty())
				__builtin_trap();
	oracles.pop_back();
	GraphMatch match = closest_match(oracles, traced, 1u << 20);
	bool of_an_oracle = std::any_of(oracles.begin(), oracles.end(),
					[&](const auto &o) { return o.size() == match.total; });
	if (match.matched > match.total || (!oracles.empty() && !of_an_oracle) ||
	    (oracles.empty() && match.total != 0) ||
	    (match.matched + match.missing.size() != match.total && match.matched != 0))
		__builtin_trap();
	return 0;
}
