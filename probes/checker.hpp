// A parsed probe program checked whole before anything is armed: probe
// points resolved, every value available where it is used, types agreeing,
// maps used one way, printf formats matching their values. Errors name the
// position. The result also says what the hypervisor can filter in VMX
// root, so that fewer events reach the console.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ast.hpp"
#include "printf_format.hpp"
#include "vtice/result.hpp"

namespace vtice::probes {

enum class MapKind { Int, String, Count, Sum, Min, Max, Avg, Hist, Lhist };

struct MapInfo {
	std::string name;		// "@" or "@name"
	std::vector<Type> keys;
	MapKind kind = MapKind::Int;
	std::int64_t lhist_min = 0, lhist_max = 0, lhist_step = 1;
};

// What the hypervisor can match in VMX root for every syscall and fn probe
// (the predicate still runs in the console on each event).
struct RootFilter {
	std::string comm;	// "" = any
	std::uint32_t pid = 0;	// 0 = any; matches a task's pid or tgid
};

struct CheckedProgram {
	Program program;
	std::vector<MapInfo> maps;	// in the order the program first assigns them
	std::vector<std::vector<FormatPiece>> formats;	// printf statements in program order
	RootFilter root_filter;
	bool has_syscall_probes = false;
	bool has_fn_probes = false;	// their addresses are the caller's to fill in
	std::uint32_t profile_hz = 0;	// profile:hz:N's N; 0: no profile probes
	bool fn_kstack = false;		// some fn: probe reads kstack: its hits copy the stack
	bool profile_kstack = false;	// ...a profile probe: the samples copy it

	bool uses_kstack() const { return fn_kstack || profile_kstack; }

	const MapInfo *map(std::string_view name) const;
	std::size_t map_index(std::string_view name) const;
};

// A syscall's number by its name; nothing for an unknown name.
using SyscallLookup = std::function<std::optional<std::uint64_t>(std::string_view)>;

inline constexpr std::int64_t kMaxLhistBuckets = 1000;
inline constexpr unsigned long kMaxProfileHz = 10000;	// VTICE_PROFILE_HZ_MAX
inline constexpr std::uint64_t kMinIntervalNs = 10'000'000;	// 10 ms: the console polls

Result<CheckedProgram> check_program(Program program, const SyscallLookup &lookup);

// parse_program, then check_program.
Result<CheckedProgram> compile_program(std::string_view source, const SyscallLookup &lookup);

}  // namespace vtice::probes
