// The probe language's syntax tree (docs/probes.md): what the parser builds
// and the checker annotates with types and resolved probe points.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vtice::probes {

// Where in the program text a node starts: errors point there.
struct Pos {
	std::uint32_t offset = 0;
	std::uint32_t line = 1;
	std::uint32_t column = 1;
};

// Stack: kstack's frames, leaf first, one per line; a map key or printf's
// %s, nothing else.
enum class Type { Int, String, Stack };

// The System V AMD64 ABI passes a function's arguments 0-5 in registers
// (argN, args->NAME), as the syscall ABI does a syscall's.
inline constexpr unsigned kArgRegisters = 6;

// The values a probe reads from its event (checker.cpp says where each is
// available).
enum class Builtin { Pid, Tid, Comm, Cpu, Nsecs, Retval, Arg, Reg, Probe, Kstack, Func, WatchAddr, Curtask };

enum class ExprKind {
	Int,		// number
	String,		// text
	Builtin,	// builtin (arg: number = N)
	MapRead,	// @text[kids...]
	Unary,		// text = "!", "-", "~"; kids[0]
	Binary,		// text = the operator; kids[0], kids[1]
	Call,		// text(kids...): only an aggregation, as a map assignment's value
	Member,		// kids[0]->member (text "->") or kids[0].member (text ".")
	Cast,		// (member *)kids[0]: member is "struct NAME" or "union NAME"
	Index,		// kids[0][kids[1]]: an array's element, or one a pointer points to (kids[1] an Int,
			// or arguments, registers and retval times numbers: an index root computes at the hit)
};

struct Expr {
	ExprKind kind = ExprKind::Int;
	Pos pos;
	std::int64_t number = 0;
	std::string text;
	Builtin builtin = Builtin::Pid;
	// args->NAME: the parameter's name; the checker sets number (its
	// register) and how much of the register is the value, from the BTF.
	// A Member read as a number: the checker sets number (its VALUE slot
	// in the probe's fetch program), bytes and is_signed, and for a
	// bitfield bit_shift and bits.
	std::string member;
	std::uint8_t bytes = 8;		// an argument's or a field's width: 1, 2, 4 or 8
	bool is_signed = false;		// ...and whether it is sign-extended
	std::uint8_t bit_shift = 0;	// a bitfield: its lowest bit in the bytes read
	std::uint8_t bits = 0;		// ...and its width (0: not a bitfield)
	std::vector<std::unique_ptr<Expr>> kids;
	Type type = Type::Int;	// set by the checker
	unsigned height = 1;	// levels of this tree (bounded by the parser)
};
using ExprPtr = std::unique_ptr<Expr>;

// A map's value that aggregates (count(), hist(x), ...); str(argN) is a call
// that is a value.
inline bool is_aggregation(const Expr &e) { return e.kind == ExprKind::Call && e.text != "str"; }

enum class StmtKind {
	Assign,	// @map[keys] = value (value may be an aggregation Call)
	Delete,	// delete(@map[keys])
	Printf,	// printf(format, args)
	Print,	// print(@map)
	Clear,	// clear(@map)
	Exit,	// exit()
};

struct Stmt {
	StmtKind kind = StmtKind::Exit;
	Pos pos;
	std::string map;		// "@" or "@name"
	std::vector<ExprPtr> keys;
	ExprPtr value;
	std::string format;		// printf's, escapes already applied
	std::vector<ExprPtr> args;	// printf's
};

// Where a probe fires; the checker fills in what the text means.
enum class PointKind { Begin, End, SyscallEnter, SyscallReturn, FnEntry, FnReturn, Addr, Interval, Profile, Watch };

// watch:w|r|rw: what an access must do to hit (the ioctl's VTICE_PROBE_WATCH_* values).
inline constexpr unsigned kWatchWrite = 1, kWatchRead = 2;

struct ProbePoint {
	Pos pos;
	std::string text;	// as written: "syscall:openat:return"
	PointKind kind = PointKind::Begin;
	bool any_syscall = false;	// syscall:*
	std::uint64_t syscall_nr = 0;
	std::uint64_t interval_ns = 0;
	std::uint32_t profile_hz = 0;	// profile:hz:N
	std::string function;		// fn:NAME, addr:NAME+OFFSET, watch:..:NAME+OFFSET:LEN
	std::string module;		// fn:MODULE:NAME: "" when not named, kVmlinux for the kernel's own
	std::uint64_t offset = 0;	// addr:NAME+OFFSET, watch:..:NAME+OFFSET:LEN
	unsigned watch_access = 0;	// watch: kWatchWrite, kWatchRead or both
	std::uint32_t watch_len = 0;	// watch: the bytes watched from address
	std::uint64_t address = 0;	// fn:NAME, addr:NAME+OFFSET, watch:: where its probe sits (the caller resolves a NAME); 0xADDRESS as written
	std::vector<std::uint64_t> return_sites;	// fn:NAME:return: its RETs (the caller finds them)
};

// fn:MODULE:NAME's MODULE for the kernel's own function (bpftrace's word).
inline constexpr const char *kVmlinux = "vmlinux";

// A fn: point's function as parameter and type lookups take it: NAME, or
// MODULE:NAME when the program names its module (a module's msr_read, not
// the kernel's).
inline std::string qualified_function(const ProbePoint &p)
{
	return p.module.empty() ? p.function : p.module + ":" + p.function;
}

// A syscall:NAME or syscall:NAME:return point's syscall as lookups and
// messages name it: "syscall:openat" for both.
inline std::string syscall_point_name(const ProbePoint &p)
{
	auto start = p.text.find(':') + 1;
	return "syscall:" + p.text.substr(start, p.text.find(':', start) - start);
}

// fn:NAME, fn:NAME:return and addr: points: armed as hidden breakpoints,
// their hits carry the registers (reg()) and come through the function
// probes' ioctl.
inline bool is_hidden_breakpoint(const ProbePoint &p)
{
	return p.kind == PointKind::FnEntry || p.kind == PointKind::FnReturn || p.kind == PointKind::Addr;
}

// ...and watch: points: armed through the probes' ioctl, their hits come
// as PROBE_HIT groups carrying the registers and the task.
inline bool is_probe_hit_point(const ProbePoint &p)
{
	return is_hidden_breakpoint(p) || p.kind == PointKind::Watch;
}

// One op of a fetch program: what root reads at a fn: probe's hit (the
// ioctl's struct vtice_fetch_op; docs/probes.md).
enum class FetchCode : std::uint8_t { End = 0, Arg = 1, Add = 2, Load = 3, Value = 4, String = 5, Retval = 6, Curtask = 7,
				    Reg = 8, Index = 9, Keep = 10, Count = 11, Sum = 12, Min = 13, Max = 14,
				    Hist = 15, Keyed = 16, Lhist = 17, Key = 18 };
// Keyed's arg: what the hit is counted under (enum vtice_fetch_key) | a
// width << 4 for Value, the operand before it (or, with an imm, the one a
// Key op before took as the key; Key's arg: its width << 4).
enum class KeyKind : std::uint8_t { Value = 0, Comm, Pid, Tid, Cpu };
// Index's arg: root's register number | how much of it is the index << 4
// (VTICE_FETCH_INDEX_ARG: a 32-bit int's register has junk above it).
enum class IndexWidth : std::uint8_t { Full = 0, S32, U32, S16, U16, S8, U8 };
// Keep's comparison (enum vtice_fetch_cmp), signed: the hit is recorded
// when "value CMP imm" holds.
enum class KeepCmp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
inline constexpr std::size_t kMaxFetchOps = 32;	// VTICE_FETCH_OPS_MAX
inline constexpr std::size_t kMaxFetchValues = 4;	// VTICE_FETCH_VALUES_MAX

struct FetchOp {
	FetchCode code = FetchCode::End;
	std::uint8_t arg = 0;	// Arg: the argument; Load: bytes; Value: slot; Reg, Index: the register;
				// Keep: KeepCmp | IndexWidth << 4; Sum, Min, Max: IndexWidth << 4
	std::int32_t imm = 0;	// Add's; Index's element size; Keep's constant; Lhist's bucket width
	std::int16_t base = 0;	// Lhist's first bucket's low end
	bool operator==(const FetchOp &) const = default;
};

// What root keeps of a probe's operand besides its count: its sum (sum(),
// avg()), its least (min()) or greatest (max()) value, its power-of-two
// buckets (hist()), its linear ones (lhist()), or the hits under each key
// (`@[KEY] = count()`).
enum class RootValue : std::uint8_t { None, Sum, Min, Max, Hist, Lhist, Keys };

// `@m[func]` or `@m[probe]` counted in root: root counts each probed
// address's hits (root_value its operand), and the console files them
// under the address's function, or its point as the program wrote it.
enum class RootKey : std::uint8_t { None, Func, Probe };

struct Probe {
	Pos pos;
	std::vector<ProbePoint> points;
	ExprPtr predicate;	// null: always
	std::vector<Stmt> body;
	int str_arg = -1;	// syscall probes: the argument whose string str() reads (the checker's); -1: none
	// fn: probes: what root reads at each hit for str() and reads through
	// arguments (the checker's); empty: nothing
	std::vector<FetchOp> fetch;
	// Its body is one `@m = count()`, `@m = sum(OPERAND)`, `avg`, `min`,
	// `max`, `hist` or `lhist`, or `@m[KEY] = count()`, and root tests all of its
	// predicate: its fetch program ends in Count, Sum, Min, Max, Hist, Lhist or
	// Keyed, and root counts its hits (and keeps OPERAND's sum, least or
	// greatest value, or buckets, or counts them by KEY) at their
	// addresses instead of recording them (the checker's).
	bool count_in_root = false;
	RootValue root_value = RootValue::None;	// what root keeps of OPERAND
	RootKey root_key = RootKey::None;	// the key the console gives each address's counts
	// root_value Keys: the word of root's KEYED slot each key part is in,
	// in the statement's order (the task's or the CPU's first, KEY's after)
	std::vector<std::uint8_t> root_key_words;
	// A fn:, addr: or watch: probe that reads kstack: root copies the stack
	// at its points' hits, and at no other probe's (the checker's)
	bool copies_kstack = false;
};

struct Program {
	std::vector<Probe> probes;
};

}  // namespace vtice::probes
