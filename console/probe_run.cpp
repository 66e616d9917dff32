#include "probe_run.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "messages.hpp"
#include "output.hpp"
#include "probe_folded.hpp"
#include "runtime.hpp"
#include "subcommands.hpp"
#include "syscall_events.hpp"
#include "trace_common.hpp"
#include "tsc_clock.hpp"
#include "vtice/read_input.hpp"
#include "vtice/write_output.hpp"

namespace vtice::console {

bool only_probe_hits(const probes::CheckedProgram &program)
{
	if (program.has_syscall_probes || program.profile_hz)
		return false;
	for (const auto &probe : program.program.probes)
		for (const auto &point : probe.points)
			if (point.kind == probes::PointKind::Interval)
				return false;
	return true;
}

const std::vector<OptionSpec> kProbeOptionSpecs = {
	{"--file", true}, {"--duration", true}, {"--output", true}, {"--folded", true}, {"--max-entries", true},
	{"--check", false}, {"--list", false}, {"--device", true}, {"--kallsyms", true}, {"--kcore", true}, {"--btf", true}};

namespace {

constexpr long kPollMs = 20;	// a run that arms nothing ticks its intervals this often
constexpr std::size_t kMaxProgramFile = 1 << 20;	// the language takes 64 KiB; a bigger file is refused by it

int fail(const Error &e)
{
	eprintf("vtice probe: %s\n", e.to_string().c_str());
	return kExitFailure;
}

void report_summary(const ProbeOptions &o, const probes::Runtime &rt, const ProbeFeed &feed, const RunTotals &totals,
		    probes::Output &out)
{
	std::string line = std::to_string(feed.stats().events) + " events; probes fired " +
			   std::to_string(rt.stats().fired) + " times; " + std::to_string(feed.stats().records) +
			   " records read; " + std::to_string(feed.decode_stats().lost) + " records lost in the rings";
	if (feed.decode_stats().malformed + feed.sample_stats().malformed)
		line += ", " + std::to_string(feed.decode_stats().malformed + feed.sample_stats().malformed) +
			" malformed groups skipped";
	if (rt.map_updates_refused())
		line += "; " + std::to_string(rt.map_updates_refused()) + " map updates refused (a map held " +
			std::to_string(o.max_entries) + " keys: --max-entries)";
	if (rt.stats().division_by_zero)
		line += "; " + std::to_string(rt.stats().division_by_zero) + " divisions by zero (they gave 0)";
	std::uint64_t unreadable = rt.stats().unreadable_reads + totals.root_unreadable;
	if (unreadable)
		line += "; " + std::to_string(unreadable) +
			" reads through arguments found their memory unmapped (they gave 0" +
			(totals.root_unreadable ? ", " + std::to_string(totals.root_unreadable) + " in root" : "") + ")";
	if (feed.stats().returns_unpaired)
		line += "; " + std::to_string(feed.stats().returns_unpaired) +
			" returns whose entry came before the run (no :return probe fired for them)";
	if (totals.syscalls)
		line += "; the hypervisor executed " + std::to_string(totals.seen) + " SYSCALL/SYSRET, " +
			std::to_string(totals.recorded) + " passed its filter";
	if (totals.functions)
		line += "; " + std::to_string(totals.probes) + " function probes recorded " +
			std::to_string(totals.hits) + " hits" +
			(totals.root_counted ? " and counted " + std::to_string(totals.root_counted) + " in root" : "") +
			(totals.passed_over ? "; root passed over " + std::to_string(totals.passed_over) +
						      " (other tasks' and those failing its tests)"
					    : "");
	if (totals.profile)
		line += "; the hypervisor recorded " + std::to_string(totals.samples) + " samples";
	eprintf("vtice probe: %s\n", line.c_str());
	out.summary("\"records\":" + std::to_string(feed.stats().records) +
		    ",\"events\":" + std::to_string(feed.stats().events) +
		    ",\"fired\":" + std::to_string(rt.stats().fired) +
		    ",\"lost\":" + std::to_string(feed.decode_stats().lost) +
		    ",\"map_updates_refused\":" + std::to_string(rt.map_updates_refused()) +
		    ",\"division_by_zero\":" + std::to_string(rt.stats().division_by_zero) +
		    ",\"unreadable_reads\":" + std::to_string(unreadable) +
		    ",\"root_unreadable_reads\":" + std::to_string(totals.root_unreadable) +
		    ",\"returns_unpaired\":" + std::to_string(feed.stats().returns_unpaired) +
		    ",\"trap_seen\":" + std::to_string(totals.seen) + ",\"trap_recorded\":" + std::to_string(totals.recorded) +
		    ",\"fn_probes\":" + std::to_string(totals.probes) + ",\"fn_hits\":" + std::to_string(totals.hits) +
		    ",\"root_counted\":" + std::to_string(totals.root_counted) +
		    ",\"passed_over\":" + std::to_string(totals.passed_over) +
		    ",\"samples\":" + std::to_string(totals.samples));
}

// The maps that --folded takes, into FILE.
Result<void> write_folded(const std::string &path, const probes::CheckedProgram &program,
			  const probes::Runtime &runtime)
{
	auto file = OutputFile::open(path);
	if (!file)
		return file.error();
	std::size_t written = 0;
	for (std::size_t m = 0; m < program.maps.size(); m++)
		if (foldable(program.maps[m])) {
			write_folded_map(file->stream(), program.maps[m], runtime.maps().entries(m));
			written++;
		}
	if (!written)
		eprintf("vtice probe: warning: --folded: no map is keyed by a kstack with a number as its value; "
			"%s is empty\n", path.c_str());
	return file->commit();
}

// Whether req's program (its number + 1; 0: none) has an op of code (HIST, LHIST and KEYED end one).
bool has_op(const vtice_probes &req, std::uint8_t program, std::uint8_t code)
{
	if (!program || program > VTICE_FETCH_PROGRAMS_MAX)
		return false;
	const auto &ops = req.fetch[program - 1];
	return std::any_of(ops, ops + VTICE_FETCH_OPS_MAX, [code](const vtice_fetch_op &op) { return op.code == code; });
}

// A KEYED slot's key as the probe's map key: a comm's bytes up to the NUL
// root zeroed after, or numbers, each part from the slot's word the
// checker put it in (root_key_words).
probes::Key key_value(const probes::Probe &probe, const vtice_probe_key &slot)
{
	probes::Key key;
	if ((probe.fetch.back().arg & 0xf) == static_cast<int>(probes::KeyKind::Comm)) {
		char comm[sizeof(slot.key) + 1] = {};
		std::memcpy(comm, slot.key, sizeof(slot.key));
		key.emplace_back(std::string(comm));
		return key;
	}
	for (std::uint8_t word : probe.root_key_words)
		key.emplace_back(std::in_place_type<std::int64_t>, static_cast<std::int64_t>(slot.key[word & 1]));
	return key;
}

// The hits each bucket gained since seen (read before now: never fewer).
std::vector<std::uint64_t> grown_buckets(const RootCount &now, const RootCount &seen)
{
	std::vector<std::uint64_t> grown(now.buckets);
	for (std::size_t i = 0; i < grown.size() && i < seen.buckets.size(); i++)
		grown[i] = grown[i] >= seen.buckets[i] ? grown[i] - seen.buckets[i] : 0;
	return grown;
}

}  // namespace

RootCountTable::RootCountTable(const probes::CheckedProgram &program, const vtice_probes &req)
{
	const auto &probes = program.program.probes;
	if (std::none_of(probes.begin(), probes.end(), [](const probes::Probe &p) { return p.count_in_root; }))
		return;
	sums_ = std::any_of(probes.begin(), probes.end(), [](const probes::Probe &p) {
		return p.root_value == probes::RootValue::Sum || p.root_value == probes::RootValue::Min ||
		       p.root_value == probes::RootValue::Max;
	});
	for (std::uint32_t i = 0; i < req.count && i < VTICE_PROBES_MAX; i++) {
		totals_.push_back({req.addrs[i], 0, 0, {}});
		read_at_.push_back(0);
		if (has_op(req, req.program[i], VTICE_FETCH_HIST) || has_op(req, req.program[i], VTICE_FETCH_LHIST))
			hists_.push_back(i);
		if (has_op(req, req.program[i], VTICE_FETCH_KEYED))
			keyed_.push_back(i);
	}
}

void RootCountTable::update_keys(std::uint32_t index, std::vector<vtice_probe_key> slots)
{
	if (index < totals_.size())
		totals_[index].keys = std::move(slots);
}

void RootCountTable::update_hist(std::uint32_t index, std::vector<std::uint64_t> buckets)
{
	if (index < totals_.size())
		totals_[index].buckets = std::move(buckets);
}

template <typename Reader, typename Keep>
Result<void> RootCountTable::read_table(std::uint32_t index, const Reader &read, Keep keep)
{
	if (index >= totals_.size() || totals_[index].hits == read_at_[index])
		return {};	// nothing counted since: the table is as last read
	auto table = read(index);
	if (!table)
		return table.error();
	(this->*keep)(index, std::move(*table));
	read_at_[index] = totals_[index].hits;
	return {};
}

Result<void> RootCountTable::read_tables(const HistReader &hist, const KeysReader &keys)
{
	for (std::uint32_t index : hists_)
		if (auto read = read_table(index, hist, &RootCountTable::update_hist); !read)
			return read;
	for (std::uint32_t index : keyed_)
		if (auto read = read_table(index, keys, &RootCountTable::update_keys); !read)
			return read;
	return {};
}

void RootCountTable::update(const std::vector<std::uint64_t> &counts, const std::vector<std::uint64_t> &sums)
{
	for (std::size_t i = 0; i < totals_.size(); i++) {
		if (i < counts.size())
			totals_[i].hits = counts[i];
		if (i < sums.size())
			totals_[i].sum = sums[i];
	}
}

RootCounts RootCountTable::totals() const { return totals_; }

RootCountFeed::RootCountFeed(const probes::CheckedProgram &program, ProbeFeed::FunctionName function_name)
{
	auto owner = [&function_name](const probes::Probe &probe, const probes::ProbePoint &p, std::uint64_t at) {
		switch (probe.root_key) {
		case probes::RootKey::Func:
			return Owner{&probe, {function_name ? function_name(at) : std::string()}};
		case probes::RootKey::Probe: return Owner{&probe, {p.text}};
		default: return Owner{&probe, {}};
		}
	};
	for (const probes::Probe &probe : program.program.probes) {
		if (!probe.count_in_root)
			continue;
		for (const probes::ProbePoint &p : probe.points) {
			if (p.kind == probes::PointKind::FnReturn)
				for (std::uint64_t site : p.return_sites)
					owner_.insert_or_assign(site, owner(probe, p, site));
			else
				owner_.insert_or_assign(p.address, owner(probe, p, p.address));
		}
	}
}

void RootCountFeed::feed(probes::Runtime &runtime, const RootCounts &counts)
{
	for (const RootCount &now : counts) {
		auto owner = owner_.find(now.address);
		RootCount &seen = seen_[now.address];
		if (owner == owner_.end() || now.hits <= seen.hits)
			continue;
		const probes::Probe &probe = *owner->second.probe;
		total_ += now.hits - seen.hits;
		if (probe.root_value == probes::RootValue::Hist || probe.root_value == probes::RootValue::Lhist) {
			runtime.add_root_hist(probe, grown_buckets(now, seen), owner->second.key);
			seen = now;
			continue;
		}
		if (probe.root_value == probes::RootValue::Keys) {
			// A slot's key never changes while it counts: what its count (and
			// a sum) grew by is that key's; a least or greatest value as it stands.
			bool sums = probe.fetch.back().imm == static_cast<int>(probes::FetchCode::Sum);
			for (std::size_t i = 0; i < now.keys.size(); i++) {
				const vtice_probe_key *before = i < seen.keys.size() ? &seen.keys[i] : nullptr;
				std::uint64_t count = before ? before->count : 0, value = before ? before->value : 0;
				if (now.keys[i].count > count)
					runtime.add_root_keyed(probe, key_value(probe, now.keys[i]), now.keys[i].count - count,
							       static_cast<std::int64_t>(sums ? now.keys[i].value - value
											      : now.keys[i].value));
			}
			seen = now;
			continue;
		}
		// A sum arrives as a total (what it grew by since goes in); a least or
		// greatest value as it stands.
		std::uint64_t value = probe.root_value == probes::RootValue::Sum ? now.sum - seen.sum : now.sum;
		if (!owner->second.key.empty())
			runtime.add_root_keyed(probe, owner->second.key[0], now.hits - seen.hits,
					       static_cast<std::int64_t>(value));
		else
			runtime.add_root_count(probe, now.hits - seen.hits, static_cast<std::int64_t>(value));
		seen = now;
	}
}

Result<ProbeOptions> parse_probe_options(const ParsedArgs &args)
{
	ProbeOptions o;
	if (auto file = args.get("--file")) {
		if (!args.positional.empty())
			return make_error("give the program as an argument or with --file, not both");
		bool stdin_ = *file == "-";
		auto bytes = read_input(stdin_ ? "/dev/stdin" : *file, kMaxProgramFile);
		if (!bytes)
			return bytes.error();
		o.source.assign(bytes->begin(), bytes->end());
		o.source_name = stdin_ ? "standard input" : *file;
	} else if (args.positional.size() == 1) {
		o.source = args.positional[0];
	} else {
		return make_error("expected one program (quote it), or --file PATH");
	}
	auto duration = seconds_option(args, "--duration", o.duration, 1e7);
	if (!duration)
		return duration.error();
	o.duration = *duration;
	auto max_entries = count_option(args, "--max-entries", o.max_entries, 1, 100'000'000);
	if (!max_entries)
		return max_entries.error();
	o.max_entries = *max_entries;
	o.check_only = args.has("--check");
	o.list_only = args.has("--list");
	if (o.list_only && o.check_only)
		return make_error("--list lists the points' arguments, --check checks a program: one of them");
	o.device = args.get("--device").value_or(o.device);
	o.kallsyms = args.get("--kallsyms").value_or(o.kallsyms);
	o.kcore = args.get("--kcore").value_or(o.kcore);
	o.btf = args.get("--btf").value_or(o.btf);
	for (const std::string *input : {&o.device, &o.kallsyms, &o.kcore, &o.btf})
		RunInputs::get().note_path(*input);
	o.output = args.get("--output").value_or("");
	if (!o.output.empty())
		if (auto ok = check_output_path(o.output); !ok)
			return make_error("--output: " + ok.error().message);
	o.folded = args.get("--folded").value_or("");
	if (!o.folded.empty())
		if (auto ok = check_output_path(o.folded); !ok)
			return make_error("--folded: " + ok.error().message);
	if (!o.folded.empty() && o.folded == o.output)
		return make_error("--folded and -o name the same file");
	return o;
}

// What root reads of guest memory at the hits (the fetch programs).
namespace {

std::string root_keeps(probes::RootValue value, const std::string &aggregation)
{
	switch (value) {
	case probes::RootValue::Sum: return ", adds up their " + aggregation + "() value";
	case probes::RootValue::Min: return ", keeps their least min() value";
	case probes::RootValue::Max: return ", keeps their greatest max() value";
	case probes::RootValue::Hist: return ", counts their hist() value in its power-of-two bucket";
	case probes::RootValue::Lhist: return ", counts their lhist() value in its bucket";
	case probes::RootValue::Keys:
		return ", counts them" + (aggregation == "count" ? std::string() : " and keeps their " + aggregation + "() value") +
		       " by key (" + std::to_string(VTICE_FETCH_KEYED_SLOTS) +
		       " keys an address; a hit under a key past those is recorded)";
	default: return "";
	}
}

// An address's counts under its function or point: root counts each
// address apart, and one address has one of each.
std::string root_key_of(probes::RootKey key)
{
	switch (key) {
	case probes::RootKey::Func: return " by function (each probed address's)";
	case probes::RootKey::Probe: return " by probe point (each probed address's)";
	default: return "";
	}
}

std::string describe_fetch(const probes::CheckedProgram &p)
{
	std::string text;
	for (const auto &probe : p.program.probes) {
		if (probe.fetch.empty())
			continue;
		std::size_t values = 0, strings = 0, tests = 0;
		for (const auto &op : probe.fetch) {
			values += op.code == probes::FetchCode::Value;
			strings += op.code == probes::FetchCode::String;
			tests += op.code == probes::FetchCode::Keep;
		}
		std::string where = "; at " + probe.points[0].text + (probe.points.size() > 1 ? " and the rest of its probe" : "");
		if (probe.count_in_root) {
			const std::string &aggregation = probe.body[0].value->text;	// count, sum, avg, min, max, hist or lhist
			text += where + " root counts the hits" +
				(tests ? " that pass " + std::to_string(tests) + " comparison" + (tests == 1 ? "" : "s") : "") +
				root_keeps(probe.root_value, aggregation) + root_key_of(probe.root_key) +
				" and records none (the map's " + aggregation +
				"() is root's)";
			continue;
		}
		text += where +
			(tests ? " root tests " + std::to_string(tests) + " of the predicate's comparisons (a hit failing "
				 "one is not recorded) and" : "") +
			" root reads " + std::to_string(values) + " value" + (values == 1 ? "" : "s") +
			(strings ? " and a string" : "") + " (" + std::to_string(probe.fetch.size()) + " fetch ops)";
	}
	return text;
}

}  // namespace

std::string describe_program(const probes::CheckedProgram &p)
{
	std::size_t points = 0;
	for (const auto &probe : p.program.probes)
		points += probe.points.size();
	std::string text = std::to_string(p.program.probes.size()) + " probe" +
			   (p.program.probes.size() == 1 ? "" : "s") + ", " + std::to_string(points) + " point" +
			   (points == 1 ? "" : "s") + ", " + std::to_string(p.maps.size()) + " map" +
			   (p.maps.size() == 1 ? "" : "s");
	if (p.profile_hz) {
		TaskFilter sampled{p.profile_filter.comm, p.profile_filter.pid};
		text += "; every CPU sampled " + std::to_string(p.profile_hz) + " times a second" +
			(p.profile_kstack ? ", with its kernel stack" : "") +
			(sampled.comm.empty() && !sampled.pid ? "" : ", recorded for " + describe_filter(sampled) + " only");
	}
	if (!p.has_syscall_probes && !p.has_fn_probes)
		return text + (p.profile_hz ? "" : "; no syscall, fn or profile probes: nothing to arm");
	TaskFilter filter{p.root_filter.comm, p.root_filter.pid};
	std::string what = p.has_syscall_probes && p.has_fn_probes ? "the syscalls and probe hits"
			   : p.has_syscall_probes			  ? "the syscalls"
									  : "the probe hits";
	if (p.has_syscall_probes && !p.syscall_numbers.empty())
		what += p.syscall_numbers.size() == 1 ? " (the one syscall the probes name)"
						      : " (the " + std::to_string(p.syscall_numbers.size()) +
								" syscalls the probes name)";
	return text + "; the hypervisor records " + what + " of " + describe_filter(filter) +
	       (p.fn_kstack ? ", the hits of the probes that read kstack with their kernel stack" : "") + describe_fetch(p);
}


int run_probe_program(const ProbeOptions &o, const probes::CheckedProgram &program, ProbeSource *source,
		      const RecordNaming &naming)
{
	std::optional<OutputFile> file;
	if (!o.output.empty()) {
		auto opened = OutputFile::open(o.output);
		if (!opened)
			return fail(opened.error());
		file.emplace(std::move(*opened));
	}
	probes::TextOutput text(stdout);
	std::optional<probes::JsonOutput> json;
	if (file)
		json.emplace(file->stream());
	probes::Output &out = json ? static_cast<probes::Output &>(*json) : text;
	probes::Runtime runtime(program, out, o.max_entries);
	ProbeFeed feed(runtime, naming.to_ns, naming.stack_text, naming.function_name);
	RootCountFeed root_counts(program, naming.function_name);
	RunTotals totals;
	if (source) {
		if (auto armed = source->arm(program, totals); !armed) {
			(void)source->disarm(totals);	// what did arm; the error to report is arm's
			return fail(armed.error());
		}
	}
	eprintf("vtice probe: %s: %s; %s\n", source ? "armed" : "running", describe_program(program).c_str(),
		o.duration ? "until the duration ends" : "Ctrl-C stops");
	std::uint64_t start = TscClock::now_ns();
	runtime.begin(start);
	auto stopping = [&] { return source ? source->stop_requested() : stop_requested(); };
	std::optional<Error> drain_error;
	while (!stopping() && !runtime.exited()) {
		if (o.duration && TscClock::now_ns() - start >= static_cast<std::uint64_t>(o.duration * 1e9))
			break;
		sleep_ms(source ? source->poll_ms() : kPollMs);
		if (source) {
			auto records = source->drain();
			if (!records) {
				drain_error = records.error();
				break;
			}
			// Root's counts first: they run up to this drain, and an exit() among
			// the records must not leave out the hits root counted before it.
			root_counts.feed(runtime, source->root_counts());
			feed.feed(*records);
			if (runtime.exited())
				break;
			if (auto ok = source->after_drain(); !ok) {
				drain_error = ok.error();
				break;
			}
		}
		runtime.tick(TscClock::now_ns());
		std::fflush(stdout);
	}
	if (source) {
		auto disarmed = source->disarm(totals);
		auto records = source->drain();
		root_counts.feed(runtime, source->root_counts());
		if (records)
			feed.feed(*records);
		totals.root_counted = root_counts.total();
		if (drain_error)
			return fail(*drain_error);
		if (!disarmed)
			return fail(disarmed.error());
	}
	runtime.finish(TscClock::now_ns());
	report_summary(o, runtime, feed, totals, out);
	std::fflush(stdout);
	if (!o.folded.empty())
		if (auto written = write_folded(o.folded, program, runtime); !written)
			return fail(written.error());
	if (file)
		if (auto written = file->commit(); !written)
			return fail(written.error());
	return kExitOk;
}

}  // namespace vtice::console
