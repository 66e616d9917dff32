// A parsed probe program checked whole before anything is armed: probe
// points resolved, every value available where it is used, types agreeing,
// maps used one way, printf formats matching their values. Errors name the
// position. The result also says what the hypervisor can filter in VMX
// root, so that fewer events reach the console.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ast.hpp"
#include "kernel_types.hpp"
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
	RootFilter root_filter;		// the syscall and fn probes'
	RootFilter profile_filter;	// the profile probes'
	bool has_syscall_probes = false;
	bool has_fn_probes = false;	// fn:, addr: or watch:: their addresses are the caller's to fill in
	std::uint32_t profile_hz = 0;	// profile:hz:N's N; 0: no profile probes
	bool fn_kstack = false;		// some fn:, addr: or watch: probe reads kstack (Probe::copies_kstack)
	bool more_regs = false;		// ...reads a register past the eight every hit carries (reg("rbx"))
	// syscall:NAME probes' str(argN): the syscall's number -> N, copied at its entry
	std::map<std::uint64_t, int> syscall_strings;
	// The syscalls the syscall: probes name, whose events root records
	// (both edges: a return pairs with its entry); empty: every one
	// (syscall:*, or no syscall: probe)
	std::set<std::uint64_t> syscall_numbers;
	bool profile_kstack = false;	// ...a profile probe: the samples copy it
	bool uses_func = false;		// some probe reads func: the console names its hits' functions

	bool uses_kstack() const { return fn_kstack || profile_kstack; }

	const MapInfo *map(std::string_view name) const;
	std::size_t map_index(std::string_view name) const;
};

// A syscall's number by its name; nothing for an unknown name.
using SyscallLookup = std::function<std::optional<std::uint64_t>(std::string_view)>;

// A kernel function's parameter, as the kernel's BTF declares it.
struct Param {
	std::string name;
	std::uint32_t bytes = 8;	// 1, 2, 4 or 8 of its register; 0: not in one register (a struct)
	bool is_signed = false;
	std::string type;		// as C spells it, for messages: "const char *"
	std::uint32_t type_id = 0;	// its BTF type (KernelTypes), when reads go through it
};
// A function's parameters in order, or why they are unknown (args->NAME);
// function is NAME or MODULE:NAME (qualified_function).
using ParamLookup = std::function<Result<std::vector<Param>>(std::string_view function)>;
// A syscall's parameters by its number, as the kernel declares them
// (args->NAME in syscall:NAME probes; name, as the program wrote it, for
// messages).
using SyscallParamLookup = std::function<Result<std::vector<Param>>(std::uint64_t nr, std::string_view name)>;

inline constexpr std::int64_t kMaxLhistBuckets = 1000;
// lhist()'s buckets between MIN and MAX that root counts in (VTICE_FETCH_HIST_BUCKETS: below, 63, the rest).
inline constexpr std::uint64_t kRootLhistBuckets = 63;
inline constexpr std::uint64_t kEverySyscall = ~std::uint64_t{0};	// syscall:*, in syscall_numbers while checking
inline constexpr std::uint64_t kMaxWatchBytes = 4096;	// VTICE_PROBE_WATCH_LEN_MAX
inline constexpr std::size_t kMaxSyscallStrings = 8;	// VTICE_SYSCALL_STRINGS_MAX
// reg()'s numbers (parser.cpp): 0-7 every hit carries (arg0..arg5's, RAX,
// RIP); from kFirstMoreReg, the ten a hit copies when asked (records.h,
// GPRS), RFLAGS last.
inline constexpr std::int64_t kRegRax = 6, kRegRip = 7;
inline constexpr std::int64_t kFirstMoreReg = 8;
inline constexpr std::int64_t kRegRflags = 17;
inline constexpr unsigned long kMaxProfileHz = 10000;	// VTICE_PROFILE_HZ_MAX
inline constexpr std::uint64_t kMinIntervalNs = 10'000'000;	// 10 ms: the console polls

// params: where args->NAME finds a function's parameters, syscall_params
// a syscall's; without them args->NAME is refused there. types: the
// kernel's types, for reads through an argument (args->how->flags);
// without them those are refused.
Result<CheckedProgram> check_program(Program program, const SyscallLookup &lookup,
				     const ParamLookup &params = {}, const KernelTypes *types = nullptr,
				     const SyscallParamLookup &syscall_params = {});

// The functions of a parsed program's fn: points, in order, as parameter
// lookups take them (qualified_function), and the NAME of its
// addr:NAME+OFFSET points; points that do not parse are left for
// check_program to refuse.
std::vector<std::string> function_points(const Program &program);

// parse_program, then check_program.
Result<CheckedProgram> compile_program(std::string_view source, const SyscallLookup &lookup,
				       const ParamLookup &params = {}, const KernelTypes *types = nullptr,
				       const SyscallParamLookup &syscall_params = {});

}  // namespace vtice::probes
