// vtice probe --list POINTS: what args-> names at each probe point, as
// bpftrace -lv lists a probe's arguments: a function's from the kernel's
// (or its module's) BTF, a syscall's from the kernel's own declaration
// (syscall_params.hpp), with the register each is.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "checker.hpp"
#include "point_patterns.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

struct PointListing {
	std::string text;
	bool complete = true;	// every fn: and syscall:NAME point's arguments were found
	std::size_t listed = 0, points = 0;	// fewer listed than points: progress stopped it
};

// Told before each point is looked up: its place (from 1), of how many,
// and the point ("syscall:openat"); false stops the listing there (Ctrl-C).
using ListProgress = std::function<bool(std::size_t point, std::size_t points, std::string_view text)>;

// POINTS as a program writes them ("fn:do_sys_openat2, syscall:openat"):
// a block a point, its name and then a line an argument ("    arg1  const
// char *filename"), or why a point has none by name. An error naming the
// first point that does not parse or resolve, or for no point at all.
Result<PointListing> list_point_args(std::string_view points, const probes::SyscallLookup &syscalls,
				     const probes::ParamLookup &params, const probes::SyscallParamLookup &syscall_params,
				     const ListProgress &progress = {});

}  // namespace vtice::console
