// A `vtice probe` run wherever its probes are armed: its options, the
// source of its records (the local /dev/vtice and rings, or a vtice debug
// stub through `vtice attach`), and the loop that feeds the records to the
// program and prints what it says (docs/probes.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "args.hpp"
#include "checker.hpp"
#include "probe_feed.hpp"
#include "runtime.hpp"
#include "vtice/ioctl.h"
#include "vtice/records.h"
#include "vtice/result.hpp"

namespace vtice::console {

struct ProbeOptions {
	std::string source;
	std::string source_name = "program";
	double duration = 0;
	std::string output;
	std::string folded;
	std::size_t max_entries = probes::kDefaultMaxMapEntries;
	bool check_only = false;
	bool list_only = false;	// source is probe points: list what args-> names there
	std::string device = "/dev/" VTICE_DEVICE_NAME;
	std::string kallsyms = "/proc/kallsyms";
	std::string kcore = "/proc/kcore";
	std::string btf = "/sys/kernel/btf/vmlinux";
};

// The options vtice probe takes (kProbeOptionSpecs), checked.
extern const std::vector<OptionSpec> kProbeOptionSpecs;
Result<ProbeOptions> parse_probe_options(const ParsedArgs &args);

// One line on what the program arms and what root does at its hits.
std::string describe_program(const probes::CheckedProgram &p);

// What a run armed and the hypervisor's counts over it.
struct RunTotals {
	bool syscalls = false, functions = false, profile = false;	// what was armed
	std::uint64_t seen = 0, recorded = 0;	// SYSCALL/SYSRET the trap executed, and kept
	std::uint32_t probes = 0;		// function probes armed
	std::uint64_t hits = 0;			// their hits the hypervisor recorded
	std::uint64_t root_counted = 0;		// their hits root counted instead (count_in_root)
	std::uint64_t passed_over = 0;		// their hits root's filter or tests chose not to record
	std::uint64_t root_unreadable = 0;	// values of the hits root counted that it found unmapped
	std::uint64_t samples = 0;		// profile samples the hypervisor recorded
};

// What root counted itself at one armed address (probes::Probe::
// count_in_root): running totals of the hits and of what a SUM added up,
// or the value a MIN or MAX kept, or the hits in each of a HIST's buckets
// or under each of a KEYED's keys.
struct RootCount {
	std::uint64_t address = 0, hits = 0;
	std::uint64_t sum = 0;	// two's complement, wrapping; MIN, MAX: the signed value as it stands
	std::vector<std::uint64_t> buckets;	// HIST: VTICE_FETCH_HIST_BUCKETS of them; else empty
	std::vector<vtice_probe_key> keys;	// KEYED: its slots (count 0: free); else empty
};
using RootCounts = std::vector<RootCount>;

// Where the probes are armed and their records come from.
// Whether nothing but fn:, addr: and watch: probes fires in program (no
// syscall:, profile: or interval:): a run whose probes a module's going
// removed has nothing left to wait for.
bool only_probe_hits(const probes::CheckedProgram &program);

class ProbeSource {
public:
	virtual ~ProbeSource() = default;
	// Arms what the program needs; totals learns what and the counts before.
	virtual Result<void> arm(const probes::CheckedProgram &program, RunTotals &totals) = 0;
	// Removes what arm() armed; totals become the run's counts.
	virtual Result<void> disarm(RunTotals &totals) = 0;
	// The records written since the last drain, one list per CPU.
	virtual Result<std::vector<std::vector<vtice_record>>> drain() = 0;
	// How often the loop drains.
	virtual long poll_ms() const = 0;
	// Whether the user asked the run to stop (Ctrl-C).
	virtual bool stop_requested() const = 0;
	// Called by the loop once a drain's records are fed (a module came or
	// went, say; the stub's machine runs on); an error ends the run.
	virtual Result<void> after_drain() { return {}; }
	// What root counted for the probes that count there (count_in_root),
	// per armed address, since arm(): as of the last drain, or of disarm().
	virtual RootCounts root_counts() const { return {}; }
};

// What root counted at each address of an ARM request, as last read: the
// state behind a source's root_counts(). Empty when no probe of the
// program counts in root (nothing to read then).
class RootCountTable {
public:
	RootCountTable() = default;
	RootCountTable(const probes::CheckedProgram &program, const vtice_probes &req);
	bool empty() const { return totals_.empty(); }
	bool sums() const { return sums_; }	// a probe keeps a value in root (sum, min, max): to be read
	// Running totals in the request's address order, as root answers them
	// (sums: empty when none is read).
	void update(const std::vector<std::uint64_t> &counts, const std::vector<std::uint64_t> &sums);
	// The addresses (places in the request) whose probe counts a hist(),
	// or a count() by key, in root: their buckets and slots are read
	// apart, each with update_hist() or update_keys().
	const std::vector<std::uint32_t> &hist_indices() const { return hists_; }
	const std::vector<std::uint32_t> &key_indices() const { return keyed_; }
	void update_hist(std::uint32_t index, std::vector<std::uint64_t> buckets);
	void update_keys(std::uint32_t index, std::vector<vtice_probe_key> slots);
	// Both, each address read with its source's reader (the module's ioctl
	// or the stub's packet); an address whose hits did not grow since its
	// last read is not read again (root bumps its table before its count).
	using HistReader = std::function<Result<std::vector<std::uint64_t>>(std::uint32_t index)>;
	using KeysReader = std::function<Result<std::vector<vtice_probe_key>>(std::uint32_t index)>;
	Result<void> read_tables(const HistReader &hist, const KeysReader &keys);
	RootCounts totals() const;

private:
	std::vector<RootCount> totals_;
	std::vector<std::uint32_t> hists_, keyed_;
	std::vector<std::uint64_t> read_at_;	// per address: its hits when its table was read
	bool sums_ = false;
	// Reads index's table with read (one of the readers) unless its hits are those of the last read.
	template <typename Reader, typename Keep>
	Result<void> read_table(std::uint32_t index, const Reader &read, Keep keep);
};

// The counts of a source's root_counts() as the program's maps take them:
// each probe that counts in root gets what its addresses counted since the
// last time (under the address's function or point, for `@m[func]` and
// `@m[probe]`: function_name names an address as the records' func is).
class RootCountFeed {
public:
	RootCountFeed(const probes::CheckedProgram &program, ProbeFeed::FunctionName function_name);
	void feed(probes::Runtime &runtime, const RootCounts &counts);
	bool any() const { return !owner_.empty(); }	// the program has such probes
	std::uint64_t total() const { return total_; }	// hits counted in root so far

private:
	struct Owner {
		const probes::Probe *probe;
		probes::Key key;	// root_key's: the address's function or point; else none
	};
	std::map<std::uint64_t, Owner> owner_;			// address -> its probe
	std::map<std::uint64_t, RootCount> seen_;		// address -> its totals fed so far
	std::uint64_t total_ = 0;
};

// How the run names what its records hold: kstack's text, func's name,
// and the records' TSC as nanoseconds (nsecs).
struct RecordNaming {
	ProbeFeed::StackText stack_text;
	ProbeFeed::FunctionName function_name;
	ProbeFeed::ToNs to_ns;
};

// Arms, feeds the records to the program until Ctrl-C, --duration or
// exit(), disarms, prints the maps and a summary (stderr); an exit status.
// source null: the program arms nothing (BEGIN, interval and END only).
int run_probe_program(const ProbeOptions &o, const probes::CheckedProgram &program, ProbeSource *source,
		      const RecordNaming &naming);

}  // namespace vtice::console
