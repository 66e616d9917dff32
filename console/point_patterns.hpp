// Probe point patterns, as the shell globs (*, ?, [...]) in a fn: or
// syscall: point's name: fn:vfs_*, fn:msr:*, fn:*_open:return,
// syscall:pread*. vtice probe expands them in a program, as bpftrace does
// (fn:vfs_* { @[func] = count(); }), and in --list's points.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ast.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

// The functions patterns are matched against (NAME, MODULE:NAME), asked
// for only when a pattern needs them: with an empty module pattern every
// function, the kernel's and each module's; with one (fn:msr:*), the
// functions of the modules whose names match it (more may come).
using FunctionNames = std::function<Result<std::vector<std::string>>(std::string_view module_pattern)>;

// Whether name matches the shell pattern (*, ?, [...]), as fnmatch.
bool matches_pattern(std::string_view pattern, std::string_view name);

// At most this many points from patterns in --list.
inline constexpr std::size_t kMaxListedPoints = 5000;

// "fn:a, syscall:b" as "fn:a" and "syscall:b", empty ones left out.
std::vector<std::string_view> split_points(std::string_view points);

// POINTS with each pattern (syscall:* too) replaced by the points it
// matches, in order (fnmatch); an error for a pattern that matches none,
// or more than kMaxListedPoints in all.
Result<std::string> expand_point_patterns(std::string_view points, const FunctionNames &functions);

// Each pattern point of program replaced by the points it matches, in
// order, at the pattern's position (syscall:* stays: it is every
// syscall's one point); an error at the pattern's position for one that
// matches nothing, for a probe past kMaxPointsPerProbe, or for a pattern
// with no functions to match (functions empty).
Result<void> expand_program_patterns(probes::Program &program, const FunctionNames &functions);

}  // namespace vtice::console
