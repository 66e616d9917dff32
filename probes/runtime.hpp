// Runs a checked probe program over events: the predicate, then each
// statement, into the maps and the output. One Runtime per run; it keeps
// the maps until the end, when finish() prints them.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checker.hpp"
#include "maps.hpp"
#include "output.hpp"

namespace vtice::probes {

// A syscall's entry or return, a fn: probe's hit or a profile sample, with
// what its probes may read.
struct ProbeEvent {
	PointKind kind = PointKind::SyscallEnter;	// SyscallEnter, SyscallReturn, FnEntry, Watch or Profile
	std::uint64_t nr = 0;			// the syscall's number
	std::uint64_t address = 0;		// FnEntry: the hit's address (an entry's or a return's); Watch: RIP after the access
	std::uint64_t watch_addr = 0;		// Watch: the first watched byte the access touched
	unsigned watch_access = 0;		// Watch: kWatchWrite and/or kWatchRead, what it did
	std::string func;			// FnEntry, Watch: the function the hit is in (its instruction's)
	std::array<std::uint64_t, 6> args{};	// a syscall's return carries its entry's
	std::int64_t retval = 0;		// a syscall's return value; RAX at a function probe's hit
	std::string comm;
	std::uint32_t pid = 0;		// the process (the kernel's tgid)
	std::uint32_t tid = 0;		// the thread (the kernel's pid)
	std::uint32_t cpu = 0;
	std::uint64_t nsecs = 0;
	std::string kstack;	// Profile and FnEntry: the frames, leaf first, one per line ("" in user mode)
	std::string str;	// FnEntry, syscalls: the string root copied for str() ("" if none or unmapped)
	// FnEntry: what root read through the arguments, by VALUE slot (0 if unreadable)
	std::array<std::uint64_t, kMaxFetchValues> values{};
	unsigned values_unreadable = 0;	// ...the slots whose read faulted (bit N: slot N)
	// A hit armed for them: RBX, RSP, RBP, R10-R15, RFLAGS (reg() from kFirstMoreReg)
	std::array<std::uint64_t, 10> more_regs{};
};

struct RuntimeStats {
	std::uint64_t fired = 0;		// probe bodies run
	std::uint64_t division_by_zero = 0;	// x / 0 and x % 0, which gave 0
	std::uint64_t unreadable_reads = 0;	// reads through arguments whose memory root could not read (0)
};

inline constexpr std::size_t kDefaultMaxMapEntries = 65536;

class Runtime {
public:
	Runtime(const CheckedProgram &program, Output &out, std::size_t max_map_entries = kDefaultMaxMapEntries);

	void begin(std::uint64_t nsecs);
	void on_event(const ProbeEvent &ev);
	// Fires the interval probes that are due at now (since begin()).
	void tick(std::uint64_t now_nsecs);
	// END probes, then every map that holds something.
	void finish(std::uint64_t nsecs);
	// n hits root counted for a probe that counts in root (count_in_root),
	// and value as its root_value says: what they added up to (Sum), or the
	// least or greatest operand root saw at the address so far (Min, Max).
	// Its body run n times, as it would have for n records. Nothing after
	// exit().
	void add_root_count(const Probe &probe, std::uint64_t n, std::int64_t value = 0);
	// Hits root counted into the power-of-two buckets of a probe whose
	// root_value is Hist: grown[i] more in root's bucket i (ioctl.h,
	// VTICE_FETCH_HIST_BUCKETS: the map's bucket i - 1), under key (none
	// but for a root_key's: the address's function or point). Nothing
	// after exit().
	void add_root_hist(const Probe &probe, const std::vector<std::uint64_t> &grown, const Key &key = {});
	// n more hits root counted under key for a probe whose root_value is
	// Keys (`@m[KEY] = count()`, or sum(), avg(), min(), max()), or whose
	// root_key names the key an address's hits are under (func, probe), with
	// value one sample of the map's kind for all n (a sum's growth, a
	// least or greatest value; nothing for a count). Nothing after exit().
	void add_root_keyed(const Probe &probe, const Value &key, std::uint64_t n, std::int64_t value = 0);
	void add_root_keyed(const Probe &probe, const Key &key, std::uint64_t n, std::int64_t value = 0);

	bool exited() const { return exited_; }	// exit() ran
	const RuntimeStats &stats() const { return stats_; }
	std::uint64_t map_updates_refused() const { return maps_.refused(); }
	const MapStore &maps() const { return maps_; }

private:
	// n hits root counted for probe's map under key, with value one sample of the map's kind.
	void fold_root(const Probe &probe, const Key &key, std::uint64_t n, std::int64_t value);
	struct Fired;	// the event and the point a probe body runs for

	static bool matches(const ProbePoint &p, const ProbeEvent &ev);
	void fire_points(PointKind kind, const Fired &base);
	void run_probe(const Probe &probe, const Fired &fired);
	void run_stmt(const Stmt &s, const Fired &fired);
	void assign(const Stmt &s, const Fired &fired);
	Key key_of(const std::vector<ExprPtr> &keys, const Fired &fired);
	Value eval(const Expr &e, const Fired &fired);
	std::int64_t eval_int(const Expr &e, const Fired &fired);
	std::int64_t binary(const Expr &e, const Fired &fired);
	Value builtin(const Expr &e, const Fired &fired) const;
	Value map_read(const Expr &e, const Fired &fired);
	std::int64_t read_through(const Expr &e, const Fired &fired);

	const CheckedProgram &program_;
	Output &out_;
	MapStore maps_;
	std::map<const Stmt *, const std::vector<FormatPiece> *> formats_;
	std::vector<std::uint64_t> next_interval_;	// per probe point, in program order
	std::uint64_t start_ = 0;
	bool exited_ = false;
	RuntimeStats stats_;
};

}  // namespace vtice::probes
