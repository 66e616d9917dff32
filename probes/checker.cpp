#include "checker.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "diagnostic.hpp"
#include "fetch_compile.hpp"
#include "parser.hpp"
#include "root_predicate.hpp"

namespace vtice::probes {

const MapInfo *CheckedProgram::map(std::string_view name) const
{
	for (const MapInfo &m : maps)
		if (m.name == name)
			return &m;
	return nullptr;
}

std::size_t CheckedProgram::map_index(std::string_view name) const
{
	return static_cast<std::size_t>(map(name) - maps.data());
}

namespace {

const char kBuiltProbes[] = "this vtice runs fn:NAME, fn:NAME:return, addr:ADDRESS, watch:w|r|rw:ADDRESS:LEN, "
			    "syscall:NAME, syscall:NAME:return, syscall:*, profile:hz:N, interval:s:N, interval:ms:N, "
			    "BEGIN and END (docs/probes.md)";

const char kStackUse[] = "a stack (kstack) is a map key or printed with printf's %s, nothing else";

const std::map<std::string, MapKind, std::less<>> kAggregations = {
	{"count", MapKind::Count}, {"sum", MapKind::Sum}, {"min", MapKind::Min}, {"max", MapKind::Max},
	{"avg", MapKind::Avg},	   {"hist", MapKind::Hist}, {"lhist", MapKind::Lhist},
};

const char *type_name(Type t)
{
	return t == Type::Int ? "a number" : t == Type::String ? "a string" : "a stack";
}

std::vector<std::string> split(const std::string &text)
{
	std::vector<std::string> parts;
	std::size_t start = 0;
	for (;;) {
		std::size_t colon = text.find(':', start);
		parts.push_back(text.substr(start, colon - start));
		if (colon == std::string::npos)
			return parts;
		start = colon + 1;
	}
}

Result<void> resolve_syscall(ProbePoint &p, const std::vector<std::string> &parts, const SyscallLookup &lookup)
{
	if (parts.size() < 2 || parts.size() > 3 || (parts.size() == 3 && parts[2] != "return"))
		return error_at(p.pos, "write syscall:NAME or syscall:NAME:return");
	p.kind = parts.size() == 3 ? PointKind::SyscallReturn : PointKind::SyscallEnter;
	if (parts[1] == "*") {
		p.any_syscall = true;
		return {};
	}
	auto nr = lookup(parts[1]);
	if (!nr)
		return error_at(p.pos, "'" + parts[1] + "' is not an x86-64 syscall name (openat, read, ...)");
	p.syscall_nr = *nr;
	return {};
}

Result<void> resolve_interval(ProbePoint &p, const std::vector<std::string> &parts)
{
	p.kind = PointKind::Interval;
	std::uint64_t unit = parts.size() == 3 && parts[1] == "s" ? 1'000'000'000 : parts.size() == 3 && parts[1] == "ms" ? 1'000'000 : 0;
	bool digits = parts.size() == 3 && !parts[2].empty() && parts[2].size() <= 9 &&
		      std::all_of(parts[2].begin(), parts[2].end(), [](char c) { return c >= '0' && c <= '9'; });
	if (!unit || !digits)
		return error_at(p.pos, "write interval:s:N or interval:ms:N (N a whole number up to 999999999)");
	p.interval_ns = std::stoull(parts[2]) * unit;
	if (p.interval_ns < kMinIntervalNs)
		return error_at(p.pos, "intervals are at least 10 ms");
	return {};
}

// profile:hz:N: every CPU sampled N times a second (vtice profile's sampler).
Result<void> resolve_profile(ProbePoint &p, const std::vector<std::string> &parts)
{
	p.kind = PointKind::Profile;
	bool digits = parts.size() == 3 && parts[1] == "hz" && !parts[2].empty() && parts[2].size() <= 5 &&
		      std::all_of(parts[2].begin(), parts[2].end(), [](char c) { return c >= '0' && c <= '9'; });
	if (!digits || std::stoul(parts[2]) < 1 || std::stoul(parts[2]) > kMaxProfileHz)
		return error_at(p.pos, "write profile:hz:N, N from 1 to " + std::to_string(kMaxProfileHz) +
					       " samples a second on each CPU");
	p.profile_hz = static_cast<std::uint32_t>(std::stoul(parts[2]));
	return {};
}

// A module's name as the kernel spells it: MODULE_NAME_LEN 56 with its
// NUL, a file's '-' made '_' (nf-tables.ko is nf_tables).
bool is_module_name(const std::string &name)
{
	return !name.empty() && name.size() < 56 && std::all_of(name.begin(), name.end(), [](char c) {
		return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
	});
}

// fn:NAME, fn:NAME:return, fn:MODULE:NAME and fn:MODULE:NAME:return (a
// function that both the kernel and a module have, or two modules;
// MODULE vmlinux is the kernel); the addresses are the caller's to find
// (in the running kernel). "return" cannot be a C function's name.
Result<void> resolve_function(ProbePoint &p, std::vector<std::string> parts)
{
	const char *usage = "write fn:NAME, fn:NAME:return, fn:MODULE:NAME or fn:MODULE:NAME:return, NAME a kernel "
			    "function (fn:vfs_read), MODULE a loaded module or vmlinux (fn:msr:msr_read)";
	bool ret = parts.size() >= 3 && parts.back() == "return";
	if (ret)
		parts.pop_back();
	if (parts.size() == 3) {
		if (!is_module_name(parts[1]))
			return error_at(p.pos, std::string(usage) + "; '" + parts[1] + "' is not a module's name");
		p.module = parts[1];
		parts.erase(parts.begin() + 1);
	}
	if (parts.size() != 2 || parts[1].empty() || parts[1] == "*" || parts[1] == "return")
		return error_at(p.pos, usage);
	p.kind = ret ? PointKind::FnReturn : PointKind::FnEntry;
	p.function = parts[1];
	return {};
}

// A number as the lexer spelled it (decimal or 0x hex), whole, in 64 bits.
std::optional<std::uint64_t> parse_number(const std::string &text)
{
	bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
	std::size_t digits = text.size() - (hex ? 2 : 0);
	if (text.empty() || digits > (hex ? 16u : 20u))
		return std::nullopt;
	errno = 0;
	char *end = nullptr;
	unsigned long long v = std::strtoull(text.c_str(), &end, hex ? 16 : 10);
	if (errno || *end || !std::isdigit(static_cast<unsigned char>(text[0])))
		return std::nullopt;
	return v;
}

// NAME+OFFSET or NAME (the caller finds NAME), or a number: into p.
Result<void> resolve_place(ProbePoint &p, const std::string &where, const char *usage)
{
	if (where.empty())
		return error_at(p.pos, usage);
	if (std::isdigit(static_cast<unsigned char>(where[0]))) {
		auto address = parse_number(where);
		if (!address || !*address)
			return error_at(p.pos, usage);
		p.address = *address;
		return {};
	}
	auto plus = where.find('+');
	p.function = where.substr(0, plus);
	if (plus != std::string::npos) {
		auto offset = parse_number(where.substr(plus + 1));
		if (!offset)
			return error_at(p.pos, usage);
		p.offset = *offset;
	}
	return {};
}

// addr:0xADDRESS or addr:NAME+OFFSET (NAME alone: +0); the caller finds
// NAME's address and makes sure an instruction starts there.
Result<void> resolve_addr(ProbePoint &p, const std::vector<std::string> &parts)
{
	const char *usage = "write addr:0xADDRESS or addr:NAME+OFFSET, an instruction in the kernel's text "
			    "(addr:do_sys_openat2+0x1c)";
	if (parts.size() != 2 || parts[1].empty())
		return error_at(p.pos, usage);
	p.kind = PointKind::Addr;
	return resolve_place(p, parts[1], usage);
}

// watch:w|r|rw:ADDRESS:LEN, ADDRESS a number or NAME[+OFFSET] (kernel data).
Result<void> resolve_watch(ProbePoint &p, const std::vector<std::string> &parts)
{
	const char *usage = "write watch:w|r|rw:ADDRESS:LEN, ADDRESS 0x... or a kernel symbol with an optional "
			    "+OFFSET, LEN 1 to 4096 bytes (watch:w:jiffies_64:8)";
	if (parts.size() != 4)
		return error_at(p.pos, usage);
	p.kind = PointKind::Watch;
	p.watch_access = parts[1] == "w" ? kWatchWrite : parts[1] == "r" ? kWatchRead
			 : parts[1] == "rw"				 ? kWatchWrite | kWatchRead
									 : 0;
	auto len = parse_number(parts[3]);
	if (!p.watch_access || !len || !*len || *len > kMaxWatchBytes)
		return error_at(p.pos, usage);
	p.watch_len = static_cast<std::uint32_t>(*len);
	return resolve_place(p, parts[2], usage);
}

Result<void> resolve_point(ProbePoint &p, const SyscallLookup &lookup)
{
	std::vector<std::string> parts = split(p.text);
	const std::string &kind = parts[0];
	if (kind == "BEGIN" || kind == "END") {
		if (parts.size() != 1)
			return error_at(p.pos, kind + " takes nothing after it");
		p.kind = kind == "BEGIN" ? PointKind::Begin : PointKind::End;
		return {};
	}
	if (kind == "syscall")
		return resolve_syscall(p, parts, lookup);
	if (kind == "interval")
		return resolve_interval(p, parts);
	if (kind == "fn")
		return resolve_function(p, parts);
	if (kind == "profile")
		return resolve_profile(p, parts);
	if (kind == "addr")
		return resolve_addr(p, parts);
	if (kind == "watch")
		return resolve_watch(p, parts);
	return error_at(p.pos, "unknown probe point '" + p.text + "'; " + kBuiltProbes);
}

bool is_syscall_point(const ProbePoint &p)
{
	return p.kind == PointKind::SyscallEnter || p.kind == PointKind::SyscallReturn;
}

// Points that fire on a task's event (a syscall, a function entry, an
// instruction).
bool is_event_point(const ProbePoint &p)
{
	return is_syscall_point(p) || is_probe_hit_point(p);
}

// What one probe's points all provide.
struct Context {
	bool task = true;	// pid, tid, comm, cpu
	bool args = true;	// argN
	bool fn_return = false;	// some point is a fn:NAME:return (argN is gone there)
	bool addr = false;	// ...or an addr: (no arguments there)
	bool retval = true;
	bool kstack = true;
	bool fn = false;	// some point is a hidden breakpoint's or a watch's (its hits copy the stack)
	bool profile = false;	// ...or a profile probe's
	bool fn_only = true;	// every point is a fn: probe's (str() then works)
	bool fn_return_only = true;	// every point is a fn:NAME:return (reads through retval work)
	bool addr_only = true;		// every point is an addr: (reads through reg() work)
	bool one_syscall_each = true;	// every point is a named syscall's (str() works there too)
	bool hit = true;	// every point is a probe hit's (reg() and func then work)
	bool watch = false;	// some point is a watch: (no arguments there)
	bool watch_only = true;	// every point is a watch: (addr then works)
};

Context context_of(const Probe &probe)
{
	Context c;
	for (const ProbePoint &p : probe.points) {
		c.task &= is_event_point(p) || p.kind == PointKind::Profile;
		c.args &= is_event_point(p) && p.kind != PointKind::FnReturn && p.kind != PointKind::Addr &&
			  p.kind != PointKind::Watch;
		c.fn_return |= p.kind == PointKind::FnReturn;
		c.addr |= p.kind == PointKind::Addr;
		c.watch |= p.kind == PointKind::Watch;
		c.watch_only &= p.kind == PointKind::Watch;
		c.retval &= p.kind == PointKind::SyscallReturn || p.kind == PointKind::FnReturn;
		c.kstack &= p.kind == PointKind::Profile || is_probe_hit_point(p);
		c.fn |= is_probe_hit_point(p);
		c.profile |= p.kind == PointKind::Profile;
		c.fn_only &= p.kind == PointKind::FnEntry;
		c.fn_return_only &= p.kind == PointKind::FnReturn;
		c.addr_only &= p.kind == PointKind::Addr;
		c.one_syscall_each &= is_syscall_point(p) && !p.any_syscall;
		c.hit &= is_probe_hit_point(p);
	}
	return c;
}

constexpr const char *kReadsInFnOnly =
	"reading through memory works in a probe whose points are all fn:NAME (through the arguments), all "
	"fn:NAME:return (through retval) or all addr: (through reg()); curtask and reg() work in each";

class Checker {
public:
	Checker(CheckedProgram &out, const ParamLookup &params, const SyscallParamLookup &syscall_params,
		const KernelTypes *types)
		: out_(out), params_(params), syscall_params_(syscall_params), types_(types)
	{
	}

	Result<void> run()
	{
		// The maps first, so a read may come before the assignment in the
		// text (and a string map's reads type as strings everywhere).
		for (Probe &probe : out_.program.probes) {
			start_probe(probe);
			for (Stmt &s : probe.body)
				if (s.kind == StmtKind::Assign)
					if (auto shape = assigned_shape(s); shape && !out_.map(s.map))
						out_.maps.push_back(std::move(*shape));
		}
		pending_reads_.clear();
		for (Probe &probe : out_.program.probes) {
			start_probe(probe);
			if (probe.predicate) {
				if (auto t = type_of(*probe.predicate); !t)
					return t.error();
				else if (*t != Type::Int)
					return error_at(probe.predicate->pos, "a predicate is a number (true when not 0), "
									      "not a string: compare it, e.g. comm == \"bash\"");
			}
			for (Stmt &s : probe.body)
				if (auto ok = check_stmt(s); !ok)
					return ok;
			probe.fetch = fetch_.ops();
			add_root_tests(probe);
		}
		if (auto ok = check_one_string_per_point(); !ok)
			return ok;
		if (auto ok = check_one_program_per_function(); !ok)
			return ok;
		return check_reads();
	}

private:
	// Each pass builds the probe's fetch program anew; the second's is kept.
	void start_probe(Probe &probe)
	{
		ctx_ = context_of(probe);
		probe_ = &probe;
		fetch_ = FetchProgram();
	}

	Result<void> check_stmt(Stmt &s)
	{
		switch (s.kind) {
		case StmtKind::Assign:
			return check_assign(s);
		case StmtKind::Printf:
			return check_printf(s);
		case StmtKind::Delete:
		case StmtKind::Print:
		case StmtKind::Clear:
			pending_reads_.push_back({s.map, s.pos, s.keys.size(), s.kind == StmtKind::Delete});
			return check_keys(s.keys);
		case StmtKind::Exit:
			return {};
		}
		return {};
	}

	Result<void> check_keys(std::vector<ExprPtr> &keys)
	{
		for (ExprPtr &k : keys)
			if (auto t = type_of(*k); !t)
				return t.error();
		return {};
	}

	Result<MapInfo> assigned_shape(Stmt &s)
	{
		MapInfo info;
		info.name = s.map;
		for (ExprPtr &k : s.keys) {
			auto t = type_of(*k);
			if (!t)
				return t.error();
			info.keys.push_back(*t);
		}
		Expr &v = *s.value;
		if (!is_aggregation(v)) {
			auto t = type_of(v);
			if (!t)
				return t.error();
			if (*t == Type::Stack)
				return error_at(v.pos, kStackUse);
			info.kind = *t == Type::Int ? MapKind::Int : MapKind::String;
			return info;
		}
		auto agg = kAggregations.find(v.text);
		if (agg == kAggregations.end())
			return error_at(v.pos, unknown_function(v.text));
		info.kind = agg->second;
		if (auto ok = check_aggregation_args(v, info); !ok)
			return ok.error();
		return info;
	}

	// str(argN): root copies, at the hit or the syscall's entry, the
	// string argument N points to (records.h); in a fn: probe also the
	// string a read through an argument finds, and at a fn:NAME:return the
	// one retval is or points to (its fetch program's STRING). One string
	// per probe, whose hits all copy it.
	Result<Type> str_type(Expr &e)
	{
		if (!ctx_.fn_only && !ctx_.one_syscall_each && !ctx_.fn_return_only && !ctx_.addr_only)
			return error_at(e.pos, "str() reads a string in fn:NAME, fn:NAME:return, addr: and syscall:NAME "
					       "probes only (not in syscall:*, profile:, watch:, or a probe mixing them)");
		Expr *arg = e.kids.size() == 1 ? e.kids[0].get() : nullptr;
		bool through = arg && (arg->kind == ExprKind::Member || arg->kind == ExprKind::Cast ||
				       arg->kind == ExprKind::Index ||
				       (arg->kind == ExprKind::Builtin &&
					(arg->builtin == Builtin::Retval || arg->builtin == Builtin::Curtask ||
					 arg->builtin == Builtin::Reg)));
		if (!arg || (!through && (arg->kind != ExprKind::Builtin || arg->builtin != Builtin::Arg)))
			return error_at(e.pos, "str() takes an argument, as in str(arg1) or str(args->filename), a "
					       "read through one, as in str(args->file->f_path.dentry->d_name.name), or "
					       "at a return str(retval) or str(retval->name), or str(reg(\"rsi\"))");
		if (through && !reads_memory())
			return error_at(arg->pos, kReadsInFnOnly);
		if (!through && ctx_.fn_return_only)
			return error_at(arg->pos, "'" + arg->text + "' is gone at a function's return: str() of "
							  "retval, or of a read through it, here");
		if (!through && ctx_.addr_only)
			return error_at(arg->pos, "'" + arg->text + "' is a function's argument at its entry: at an "
							  "addr:, str() of the register that holds it now, as in "
							  "str(reg(\"rsi\"))");
		if (through) {
			if (auto ok = add_read(*arg, ReadAs::String); !ok)
				return ok.error();
		} else {
			if (auto ok = resolve_typed_arg(*arg); !ok)
				return ok.error();
			if (ctx_.fn_only) {
				FetchOp from{FetchCode::Arg, static_cast<std::uint8_t>(arg->number), 0};
				if (auto ok = fetch_.add_string(e.pos, {from}); !ok)
					return ok.error();
			} else if (auto ok = set_syscall_string(e, static_cast<int>(arg->number)); !ok) {
				return ok.error();
			}
		}
		e.kids[0]->type = Type::Int;
		return Type::String;
	}

	Result<void> set_syscall_string(const Expr &e, int n)
	{
		if (probe_->str_arg >= 0 && probe_->str_arg != n)
			return error_at(e.pos, "one str() argument per probe: this probe reads str(arg" +
						       std::to_string(probe_->str_arg) + ") already");
		probe_->str_arg = n;
		return {};
	}

	// A read through an argument as a number: root loads it into a VALUE
	// slot of the probe's fetch program at each hit.
	Result<Type> typed_read_type(Expr &e)
	{
		if (!reads_memory())
			return error_at(e.pos, kReadsInFnOnly);
		if (auto ok = add_read(e, ReadAs::Number); !ok)
			return ok.error();
		return Type::Int;
	}

	// Root runs a fetch program at a fn: or addr: probe's hits: at the
	// entries, at the returns or at addresses (one kind a probe: its one
	// program starts at one).
	bool reads_memory() const { return ctx_.fn_only || ctx_.fn_return_only || ctx_.addr_only; }

	// The read compiled for each function of the probe: all must agree.
	Result<CompiledRead> compile_for_points(const Expr &e, ReadAs as)
	{
		std::optional<CompiledRead> first;
		for (const ProbePoint &p : probe_->points) {
			auto read = compile_read(e, as, p, params_, types_);
			if (!read)
				return read.error();
			if (first && !(*read == *first))
				return error_at(e.pos, "this read differs between the functions of this probe (fn:" +
							       qualified_function(p) + "): one probe, one place");
			first = std::move(*read);
		}
		return std::move(*first);
	}

	Result<void> add_read(Expr &e, ReadAs as)
	{
		auto read = compile_for_points(e, as);
		if (!read)
			return read.error();
		if (as == ReadAs::String)
			return fetch_.add_string(e.pos, std::move(read->ops));
		auto slot = fetch_.add_value(e.pos, std::move(read->ops));
		if (!slot)
			return slot.error();
		e.number = *slot;
		e.bytes = static_cast<std::uint8_t>(read->scalar.bytes);
		e.is_signed = read->scalar.is_signed;
		e.bit_shift = read->bit_shift;
		e.bits = read->bits;
		return {};
	}

	// A hidden breakpoint's point as the program names it: fn:NAME,
	// fn:NAME:return, addr:... ("" for the other kinds).
	static std::string breakpoint_key(const ProbePoint &p)
	{
		if (!is_hidden_breakpoint(p))
			return "";
		if (p.kind == PointKind::Addr)
			return p.text;
		return "fn:" + qualified_function(p) + (p.kind == PointKind::FnReturn ? ":return" : "");
	}

	// No other probe of the program has a point where probe has one.
	bool alone_at_its_points(const Probe &probe) const
	{
		for (const Probe &other : out_.program.probes)
			for (const ProbePoint &p : other.points)
				for (const ProbePoint &mine : probe.points)
					if (&other != &probe && breakpoint_key(p) == breakpoint_key(mine))
						return false;
		return true;
	}

	// The predicate's comparisons root can test at the hit, ahead of the
	// reads, so that a hit failing them is not recorded: only for a probe
	// alone at its points (root runs one program an address, and another
	// probe there may want the hits this one's predicate drops).
	void add_root_tests(Probe &probe)
	{
		if (!reads_memory() || !alone_at_its_points(probe))
			return;
		std::size_t tested = 0;
		if (probe.predicate) {
			auto tests = root_tests(*probe.predicate, [this](const Expr &e) { return root_operand(e); },
						kMaxFetchOps - probe.fetch.size(), &tested);
			probe.fetch.insert(probe.fetch.begin(), tests.begin(), tests.end());
		}
		add_root_count(probe, tested);
	}

	// A probe alone at its points whose body is `@m = count()`,
	// `@m = F(OPERAND)` for F sum, avg, min, max or hist (OPERAND one root
	// computes exactly; an average is the sum over the count) or
	// `@m[KEY] = count()`, `sum()`, `avg()`, `min()` or `max()` (root_keyed), and whose predicate root
	// tests whole (its comparisons, tested conjuncts of them, and
	// `comm == "NAME"` terms root's filter holds): root counts its hits,
	// keeps OPERAND's sum, least or greatest value or its power-of-two
	// buckets, or counts them by KEY, and records none (docs/probes.md,
	// "Where the work is done").
	void add_root_count(Probe &probe, std::size_t tested)
	{
		if (probe.body.size() != 1 || !is_root_call(probe.body[0]))
			return;
		std::size_t terms = probe.predicate ? conjunct_count(*probe.predicate) : 0;
		std::size_t filtered = probe.predicate ? comm_conjuncts(*probe.predicate, out_.root_filter.comm) : 0;
		if (tested + filtered != terms)
			return;
		const Stmt &s = probe.body[0];
		RootKey by_point = point_key(probe, s);
		std::vector<std::uint8_t> key_words;
		auto ending = s.keys.empty() || by_point != RootKey::None ? root_aggregation(*s.value)
									  : root_keyed(s, key_words);
		auto reads = std::find_if(probe.fetch.rbegin(), probe.fetch.rend(), [](const FetchOp &op) {
				     return op.code == FetchCode::Keep;
			     }).base();	// after root's tests, the body's (and predicate's) reads
		if (!ending)
			return;
		auto tail = root_tail(std::vector<FetchOp>(reads, probe.fetch.end()), std::move(*ending));
		if (!tail || static_cast<std::size_t>(reads - probe.fetch.begin()) + tail->size() > kMaxFetchOps)
			return;
		probe.fetch.erase(reads, probe.fetch.end());
		probe.fetch.insert(probe.fetch.end(), tail->begin(), tail->end());
		probe.count_in_root = true;
		probe.root_value = root_value_of(probe.fetch.back().code);
		probe.root_key = by_point;
		probe.root_key_words = std::move(key_words);
	}

	// What follows root's tests in a program root aggregates, in place of
	// the reads the console would have had recorded (the body's and the
	// predicate's, with their VALUEs); ending reads its operands itself (a
	// KEYED's each read then its VALUE). Root records a hit it aggregates
	// only when a KEYED finds no slot (or no task for its key); the console
	// then counts that record, so it must carry every read the console uses:
	// - no KEYED: nothing is recorded, so the ending alone (a predicate's
	//   reads are root's tests already: all of it is tested);
	// - a KEYED whose ending records the same slots as the reads: the ending;
	// - a KEYED after reads the ending does not make (a predicate's): the
	//   reads, then the ending without its VALUEs (it reads again what it
	//   needs), or only its last op when the reads end with the rest of it.
	// None when the reads hold a str().
	static std::optional<std::vector<FetchOp>> root_tail(std::vector<FetchOp> reads, std::vector<FetchOp> ending)
	{
		auto slots = [](const std::vector<FetchOp> &ops) {
			std::set<int> values;
			for (const FetchOp &op : ops)
				if (op.code == FetchCode::Value)
					values.insert(op.arg);
			return values;
		};
		auto is_value = [](const FetchOp &op) { return op.code == FetchCode::Value; };
		if (std::any_of(reads.begin(), reads.end(), [](const FetchOp &op) { return op.code == FetchCode::String; }))
			return std::nullopt;
		if (ending.back().code != FetchCode::Keyed || slots(reads) == slots(ending))
			return ending;
		if (reads.size() >= ending.size() - 1 &&
		    std::equal(ending.begin(), ending.end() - 1, reads.end() - static_cast<long>(ending.size() - 1)))
			return reads.push_back(ending.back()), reads;
		std::erase_if(ending, is_value);
		reads.insert(reads.end(), ending.begin(), ending.end());
		return reads;
	}

	// `@m[func]` and `@m[probe]` at hidden breakpoints: one function and
	// one point an address, so root's count at each address is that key's
	// (a watch: hit's func is where the access was: not one an address).
	static RootKey point_key(const Probe &probe, const Stmt &s)
	{
		if (s.keys.size() != 1 || s.keys[0]->kind != ExprKind::Builtin ||
		    !std::all_of(probe.points.begin(), probe.points.end(), is_hidden_breakpoint))
			return RootKey::None;
		switch (s.keys[0]->builtin) {
		case Builtin::Func: return RootKey::Func;
		case Builtin::Probe: return RootKey::Probe;
		default: return RootKey::None;
		}
	}

	static RootValue root_value_of(FetchCode last)
	{
		switch (last) {
		case FetchCode::Sum: return RootValue::Sum;
		case FetchCode::Min: return RootValue::Min;
		case FetchCode::Max: return RootValue::Max;
		case FetchCode::Hist: return RootValue::Hist;
		case FetchCode::Lhist: return RootValue::Lhist;
		case FetchCode::Keyed: return RootValue::Keys;
		default: return RootValue::None;
		}
	}

	// The ops that end a program root aggregates for call: COUNT for
	// count(), the operand then SUM (at the console's width) for sum() and
	// avg(), then MIN, MAX, HIST or LHIST for min(), max(), hist() and
	// lhist(); nothing for a call root cannot do exactly.
	std::optional<std::vector<FetchOp>> root_aggregation(const Expr &call)
	{
		static const std::map<std::string, FetchCode> kept = {
			{"sum", FetchCode::Sum}, {"avg", FetchCode::Sum}, {"min", FetchCode::Min}, {"max", FetchCode::Max},
			{"hist", FetchCode::Hist}, {"lhist", FetchCode::Lhist}};
		if (call.text == "count" && call.kids.empty())
			return std::vector<FetchOp>{{FetchCode::Count, 0, 0}};
		auto code = kept.find(call.text);
		bool linear = code != kept.end() && code->second == FetchCode::Lhist;
		if (code == kept.end() || call.kids.size() != (linear ? 4u : 1u))
			return std::nullopt;
		auto operand = root_operand(*call.kids[0]);	// never recorded: no VALUE
		auto bounds = linear ? root_lhist_bounds(call) : std::optional<FetchOp>(FetchOp{});
		if (!operand || !bounds)
			return std::nullopt;
		std::vector<FetchOp> ops = operand->ops;
		ops.push_back({code->second, static_cast<std::uint8_t>(static_cast<int>(operand->width) << 4), bounds->imm,
			       bounds->base});
		return ops;
	}

	// lhist(x, MIN, MAX, STEP)'s buckets as root's LHIST makes them (base
	// MIN, as wide as STEP), when each of them is one of the map's: MIN
	// fits root's 16-bit base, STEP its 32-bit width, MAX - MIN is a whole
	// number of steps, and there are at most 63 (root's last bucket then
	// holds only the map's top one, the values from MAX on).
	static std::optional<FetchOp> root_lhist_bounds(const Expr &call)
	{
		std::int64_t min = literal(*call.kids[1]), max = literal(*call.kids[2]), step = literal(*call.kids[3]);
		if (min < INT16_MIN || min > INT16_MAX || step <= 0 || step > INT32_MAX || max <= min)
			return std::nullopt;
		std::uint64_t span = static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min);
		if (span % static_cast<std::uint64_t>(step) || span / static_cast<std::uint64_t>(step) > kRootLhistBuckets)
			return std::nullopt;
		FetchOp bounds;
		bounds.imm = static_cast<std::int32_t>(step);
		bounds.base = static_cast<std::int16_t>(min);
		return bounds;
	}

	// `@m[KEY] = count()` and `@m[KEY] = F(OPERAND)` for F sum, avg, min or
	// max, with one key or two (at most one of them the task's or the CPU's,
	// and a comm alone): each key root computes (an operand's) then KEY,
	// OPERAND's ops, and KEYED under the task's key or KEY's words, keeping
	// OPERAND as F's op would (its imm). A count under one computed key is
	// KEYED by the accumulator alone, with no KEY. Nothing for another key
	// or call. words: the slot word each key part lands in, in the
	// statement's order (the task's first, KEY's after it).
	std::optional<std::vector<FetchOp>> root_keyed(const Stmt &s, std::vector<std::uint8_t> &words)
	{
		static const std::map<std::string, FetchCode> kept = {
			{"sum", FetchCode::Sum}, {"avg", FetchCode::Sum}, {"min", FetchCode::Min}, {"max", FetchCode::Max}};
		auto keep = kept.find(s.value->text);
		bool counts = s.value->text == "count" && s.value->kids.empty();
		if (s.keys.empty() || s.keys.size() > 2 || (!counts && (keep == kept.end() || s.value->kids.size() != 1)))
			return std::nullopt;
		std::optional<KeyKind> task;
		std::vector<const Expr *> computed;
		words.clear();
		for (const auto &key : s.keys) {
			auto kind = task ? std::nullopt : task_key(*key);
			if (kind)
				task = kind;
			else
				computed.push_back(key.get());
			words.push_back(kind ? 0 : static_cast<std::uint8_t>(computed.size()));	// the task's word first
		}
		if (!task)
			for (std::uint8_t &word : words)
				word--;	// KEY's words from the first
		if (task == KeyKind::Comm && !computed.empty())
			return std::nullopt;	// a comm fills both words of root's key
		std::vector<FetchOp> ops;
		for (const Expr *key : computed) {
			auto operand = root_operand_recorded(*key);
			if (!operand)
				return std::nullopt;
			ops.insert(ops.end(), operand->ops.begin(), operand->ops.end());
			auto width = static_cast<std::uint8_t>(static_cast<int>(operand->width) << 4);
			if (counts && s.keys.size() == 1) {
				ops.push_back({FetchCode::Keyed, width, 0});	// the accumulator is the key
				return ops;
			}
			ops.push_back({FetchCode::Key, width, 0});
		}
		std::uint8_t width = 0;
		if (!counts) {
			auto operand = root_operand_recorded(*s.value->kids[0]);
			if (!operand)
				return std::nullopt;
			ops.insert(ops.end(), operand->ops.begin(), operand->ops.end());
			width = static_cast<std::uint8_t>(static_cast<int>(operand->width) << 4);
		}
		ops.push_back({FetchCode::Keyed, static_cast<std::uint8_t>(static_cast<int>(task.value_or(KeyKind::Value)) | width),
			       counts ? 0 : static_cast<std::int32_t>(keep->second)});
		return without_repeated_values(std::move(ops));
	}

	// The key root gives of the task or the CPU for a builtin: none for another expression.
	static std::optional<KeyKind> task_key(const Expr &key)
	{
		static const std::map<Builtin, KeyKind> of_task = {
			{Builtin::Comm, KeyKind::Comm}, {Builtin::Pid, KeyKind::Pid}, {Builtin::Tid, KeyKind::Tid},
			{Builtin::Cpu, KeyKind::Cpu}};
		auto kind = key.kind == ExprKind::Builtin ? of_task.find(key.builtin) : of_task.end();
		return kind == of_task.end() ? std::nullopt : std::optional<KeyKind>(kind->second);
	}

	// ops with a VALUE written once (root refuses a slot twice): one read as
	// a key and the operand (`@[args->a] = max(args->a)`) is recorded once.
	static std::vector<FetchOp> without_repeated_values(std::vector<FetchOp> ops)
	{
		std::set<int> seen;
		std::erase_if(ops, [&seen](const FetchOp &op) {
			return op.code == FetchCode::Value && !seen.insert(op.arg).second;
		});
		return ops;
	}

	// root_operand, and a read's VALUE after its ops: what a hit root does
	// not count after all is recorded with (a KEYED without a slot).
	std::optional<RootOperand> root_operand_recorded(const Expr &e)
	{
		auto operand = root_operand(e);
		if (operand && is_read(e))
			operand->ops.push_back({FetchCode::Value, static_cast<std::uint8_t>(e.number), 0});
		return operand;
	}

	static bool is_read(const Expr &e)
	{
		return e.kind == ExprKind::Member || e.kind == ExprKind::Cast || e.kind == ExprKind::Index;
	}

	// An aggregating call root may do: unkeyed, or under one key or two.
	static bool is_root_call(const Stmt &s)
	{
		return s.kind == StmtKind::Assign && s.keys.size() <= 2 && s.value && s.value->kind == ExprKind::Call;
	}

	// An operand root computes exactly as the console will: an argument
	// or a return value (its BTF width), a register, a read through one
	// (not a bitfield).
	std::optional<RootOperand> root_operand(const Expr &e)
	{
		if (e.kind == ExprKind::Builtin && e.builtin == Builtin::Arg && e.number >= 0)
			return RootOperand{{{FetchCode::Arg, static_cast<std::uint8_t>(e.number), 0}},
					   width_of(e.bytes, e.is_signed)};
		if (e.kind == ExprKind::Builtin && e.builtin == Builtin::Retval && ctx_.fn_return_only)
			return RootOperand{{{FetchCode::Retval, 0, 0}}, width_of(e.bytes, e.is_signed)};
		if (e.kind == ExprKind::Builtin && e.builtin == Builtin::Reg) {
			auto reg = root_register(e.number);
			return reg ? std::optional<RootOperand>(RootOperand{{{FetchCode::Reg, *reg, 0}}, IndexWidth::Full})
				   : std::nullopt;
		}
		if (!is_read(e))
			return std::nullopt;
		auto read = compile_for_points(e, ReadAs::Number);
		if (!read || read->bits)
			return std::nullopt;
		return RootOperand{read->ops, width_of(read->scalar.bytes, read->scalar.is_signed)};
	}

	// Root runs one fetch program per probed address: probes of one
	// function's entry (or of its returns) that read memory must read the
	// same.
	Result<void> check_one_program_per_function()
	{
		std::map<std::string, const Probe *> reader_of;
		for (const Probe &probe : out_.program.probes)
			for (const ProbePoint &p : probe.points) {
				std::string where = breakpoint_key(p);
				if (probe.fetch.empty() || where.empty())
					continue;
				auto [it, fresh] = reader_of.emplace(where, &probe);
				if (!fresh && it->second->fetch != probe.fetch)
					return error_at(p.pos, where + " reads other memory (str() or fields) in another "
								   "probe: one set of reads per function; put them in "
								   "one probe");
			}
		return {};
	}

	// Root copies one string per syscall: two probes of one must read
	// the same argument's; and it has
	// kMaxSyscallStrings syscall slots.
	Result<void> check_one_string_per_point()
	{
		std::map<std::string, int> arg_of;
		for (const Probe &probe : out_.program.probes)
			for (const ProbePoint &p : probe.points) {
				if (probe.str_arg < 0 || !is_syscall_point(p))
					continue;
				std::string key = syscall_point_name(p);
				auto [it, fresh] = arg_of.emplace(key, probe.str_arg);
				if (!fresh && it->second != probe.str_arg)
					return error_at(p.pos, key + " reads str(arg" + std::to_string(it->second) +
								       ") in another probe: one string per syscall");
				if (!fresh)
					continue;
				if (out_.syscall_strings.size() == kMaxSyscallStrings)
					return error_at(p.pos, "str() in at most " + std::to_string(kMaxSyscallStrings) +
								       " syscalls per program: the hypervisor has that many slots");
				out_.syscall_strings[p.syscall_nr] = probe.str_arg;
			}
		return {};
	}

	static std::string unknown_function(const std::string &name)
	{
		if (name == "kstack")
			return "kstack is a value: write kstack, without ()";
		if (name == "ksym")
			return name + "() reads kernel memory at the probe, which this vtice does not do yet "
				      "(docs/probes.md)";
		return "unknown function '" + name + "': a map takes count(), sum(x), min(x), max(x), avg(x), "
		       "hist(x) or lhist(x, min, max, step)";
	}

	Result<void> check_aggregation_args(Expr &call, MapInfo &info)
	{
		std::size_t want = info.kind == MapKind::Count ? 0 : info.kind == MapKind::Lhist ? 4 : 1;
		if (call.kids.size() != want)
			return error_at(call.pos, call.text + "() takes " + std::to_string(want) + " argument" +
							  (want == 1 ? "" : "s"));
		for (std::size_t i = 0; i < call.kids.size(); i++) {
			auto t = type_of(*call.kids[i]);
			if (!t)
				return t.error();
			if (*t != Type::Int)
				return error_at(call.kids[i]->pos, call.text + "() counts numbers, not strings");
			if (i > 0 && call.kids[i]->kind != ExprKind::Int &&
			    !(call.kids[i]->kind == ExprKind::Unary && call.kids[i]->text == "-" &&
			      call.kids[i]->kids[0]->kind == ExprKind::Int))
				return error_at(call.kids[i]->pos, "lhist's min, max and step are numbers written out");
		}
		if (info.kind == MapKind::Lhist)
			return check_lhist_bounds(call, info);
		return {};
	}

	static std::int64_t literal(const Expr &e)
	{
		return e.kind == ExprKind::Int ? e.number : -e.kids[0]->number;
	}

	Result<void> check_lhist_bounds(Expr &call, MapInfo &info)
	{
		info.lhist_min = literal(*call.kids[1]);
		info.lhist_max = literal(*call.kids[2]);
		info.lhist_step = literal(*call.kids[3]);
		if (info.lhist_step <= 0 || info.lhist_max <= info.lhist_min)
			return error_at(call.pos, "lhist needs min < max and a step above 0");
		// In unsigned arithmetic: max - min may not fit in 63 bits.
		std::uint64_t span = static_cast<std::uint64_t>(info.lhist_max) - static_cast<std::uint64_t>(info.lhist_min);
		if (span / static_cast<std::uint64_t>(info.lhist_step) > kMaxLhistBuckets)
			return error_at(call.pos, "lhist makes at most " + std::to_string(kMaxLhistBuckets) + " buckets");
		return {};
	}

	Result<void> check_assign(Stmt &s)
	{
		auto shape = assigned_shape(s);
		if (!shape)
			return shape.error();
		const MapInfo *known = out_.map(s.map);
		if (!known)	// the first pass could not type it: it will not now either
			return error_at(s.pos, "internal: " + s.map + " was not collected");
		if (known->keys != shape->keys)
			return error_at(s.pos, s.map + " was first used with other keys (" + describe_keys(known->keys) +
						       "); here: " + describe_keys(shape->keys));
		bool same = known->kind == shape->kind &&
			    (known->kind != MapKind::Lhist || (known->lhist_min == shape->lhist_min &&
							       known->lhist_max == shape->lhist_max &&
							       known->lhist_step == shape->lhist_step));
		if (!same)
			return error_at(s.value->pos, s.map + " was first assigned " + describe_kind(*known) +
							      "; one map holds one kind of value");
		return {};
	}

	static std::string describe_keys(const std::vector<Type> &keys)
	{
		if (keys.empty())
			return "no key";
		std::string out;
		for (Type t : keys)
			out += std::string(out.empty() ? "" : ", ") + type_name(t);
		return out;
	}

	static std::string describe_kind(const MapInfo &m)
	{
		switch (m.kind) {
		case MapKind::Int: return "a number";
		case MapKind::String: return "a string";
		case MapKind::Lhist: return "lhist() with other bounds or another kind";
		default: break;
		}
		for (const auto &[name, kind] : kAggregations)
			if (kind == m.kind)
				return name + "()";
		return "?";
	}

	Result<void> check_printf(Stmt &s)
	{
		auto pieces = parse_format(s.format);
		if (!pieces)
			return error_at(s.pos, "printf: " + pieces.error().message);
		std::vector<Type> want = format_types(*pieces);
		if (want.size() != s.args.size())
			return error_at(s.pos, "printf's format takes " + std::to_string(want.size()) + " value" +
						       (want.size() == 1 ? "" : "s") + ", and " +
						       std::to_string(s.args.size()) + (s.args.size() == 1 ? " is" : " are") +
						       " given");
		for (std::size_t i = 0; i < want.size(); i++) {
			auto t = type_of(*s.args[i]);
			if (!t)
				return t.error();
			if (*t != want[i] && !(*t == Type::Stack && want[i] == Type::String))
				return error_at(s.args[i]->pos, "printf's conversion " + std::to_string(i + 1) + " takes " +
									type_name(want[i]) + ", this is " + type_name(*t));
		}
		out_.formats.push_back(std::move(*pieces));
		return {};
	}

	Result<Type> type_of(Expr &e)
	{
		auto t = compute_type(e);
		if (t)
			e.type = *t;
		return t;
	}

	Result<Type> compute_type(Expr &e)
	{
		switch (e.kind) {
		case ExprKind::Int:
			return Type::Int;
		case ExprKind::String:
			return Type::String;
		case ExprKind::Builtin:
			if (e.builtin == Builtin::Curtask)	// a read: root finds the task at the hit
				return typed_read_type(e);
			if (auto ok = resolve_typed_arg(e); !ok)
				return ok.error();
			resolve_return_width(e);
			return builtin_type(e);
		case ExprKind::MapRead:
			if (auto ok = check_keys(e.kids); !ok)
				return ok.error();
			pending_reads_.push_back({e.text, e.pos, e.kids.size(), false, &e});
			if (const MapInfo *m = out_.map(e.text); m && m->kind == MapKind::String)
				return Type::String;
			return Type::Int;
		case ExprKind::Unary:
			return unary_type(e);
		case ExprKind::Binary:
			return binary_type(e);
		case ExprKind::Member:
		case ExprKind::Cast:
		case ExprKind::Index:
			return typed_read_type(e);
		case ExprKind::Call:
			if (e.text == "str")
				return str_type(e);
			if (kAggregations.count(e.text))
				return error_at(e.pos, e.text + "() is a map's value: write @name = " + e.text + "(...)");
			return error_at(e.pos, unknown_function(e.text));
		}
		return Type::Int;
	}

	// args->NAME: its register and width, from the BTF of each function the
	// probe fires in, or the kernel's declaration of each syscall; every
	// one must have NAME at the same place.
	Result<void> resolve_typed_arg(Expr &e)
	{
		if (e.builtin != Builtin::Arg || e.member.empty() || e.number >= 0)
			return {};
		if (!ctx_.fn_only && !ctx_.one_syscall_each)
			return error_at(e.pos, e.text + " names an argument in fn:NAME probes (from the kernel's BTF) "
							"and in syscall:NAME ones (from the kernel's declarations of its "
							"syscalls); elsewhere read argN");
		if (ctx_.fn_only && !params_)
			return error_at(e.pos, e.text + ": no kernel BTF here to name arguments by; read argN");
		if (!ctx_.fn_only && !syscall_params_)
			return error_at(e.pos, e.text + ": no kernel here to name syscalls' arguments; read argN");
		// All or nothing: a half-resolved name would pass the second pass.
		std::optional<Placed> first;
		for (const ProbePoint &p : probe_->points) {
			std::string where = ctx_.fn_only ? qualified_function(p) : syscall_point_name(p);
			auto placed = place_of(e, where, ctx_.fn_only ? params_(where) : syscall_params_(p.syscall_nr, where));
			if (!placed)
				return placed.error();
			if (first && (placed->index != first->index || placed->param.bytes != first->param.bytes ||
				      placed->param.is_signed != first->param.is_signed))
				return error_at(e.pos, e.text + (ctx_.fn_only ? " differs between the functions of this probe (fn:"
									      : " differs between the syscalls of this probe (") +
							       where + "): one probe, one place");
			first = *placed;
		}
		if (first) {
			e.number = first->index;
			e.bytes = static_cast<std::uint8_t>(first->param.bytes);
			e.is_signed = first->param.is_signed;
		}
		return {};
	}

	// retval at fn:NAME:return is RAX, of which a function returning int
	// sets only EAX (mov $-9,%eax leaves RAX 0xfffffff7): the width and
	// sign of the BTF return type, when every function of the probe has
	// the same; RAX whole otherwise (and at syscall returns).
	void resolve_return_width(Expr &e)
	{
		if (e.builtin != Builtin::Retval || !ctx_.fn_return_only || !types_)
			return;
		std::optional<KernelTypes::Scalar> width;
		for (const ProbePoint &p : probe_->points) {
			auto type = types_->return_type(qualified_function(p));
			auto s = type ? types_->scalar(*type) : std::nullopt;
			if (!s || (width && (s->bytes != width->bytes || s->is_signed != width->is_signed)))
				return;
			width = s;
		}
		if (width) {
			e.bytes = static_cast<std::uint8_t>(width->bytes);
			e.is_signed = width->is_signed;
		}
	}

	struct Placed {
		Param param;
		int index;
	};

	Result<Placed> place_of(const Expr &e, const std::string &function, const Result<std::vector<Param>> &params)
	{
		if (!params)
			return error_at(e.pos, e.text + ": " + params.error().message);
		std::string names;
		for (std::size_t i = 0; i < params->size(); i++) {
			const Param &param = (*params)[i];
			names += (names.empty() ? "" : ", ") + param.name;
			if (param.name != e.member)
				continue;
			if (i >= kArgRegisters)
				return error_at(e.pos, e.text + " is argument " + std::to_string(i) + " of " + function +
							       ": only arguments 0-5 come in registers");
			if (param.bytes == 0)
				return error_at(e.pos, e.text + " (" + param.type + ") is passed by value, not in "
								"one register");
			return Placed{param, static_cast<int>(i)};
		}
		return error_at(e.pos, function + " has no argument '" + e.member + "'" +
					       (names.empty() ? std::string(": it takes none") : ": it takes " + names));
	}

	Result<Type> builtin_type(const Expr &e)
	{
		switch (e.builtin) {
		case Builtin::Retval:
			if (!ctx_.retval)
				return error_at(e.pos, "retval exists only in syscall:NAME:return and fn:NAME:return probes");
			return Type::Int;
		case Builtin::Pid:
		case Builtin::Tid:
		case Builtin::Cpu:
			if (!ctx_.task)
				return error_at(e.pos, "'" + e.text + "' exists only in syscall, fn, addr, watch and profile probes (not "
									"in BEGIN, END, interval)");
			return Type::Int;
		case Builtin::Arg:
			if (ctx_.fn_return)
				return error_at(e.pos, "'" + e.text + "' is gone at a function's return (its registers hold "
									"what the function left): read it in fn:NAME");
			if (ctx_.addr || ctx_.watch)
				return error_at(e.pos, "'" + e.text + "' is a function's argument at its entry; at an addr: "
									"or a watch: read the registers themselves (reg(\"rdi\")), "
									"or the argument in fn:NAME");
			if (!ctx_.args)
				return error_at(e.pos, "'" + e.text + "' exists only in syscall and fn probes (not in "
									"profile, BEGIN, END, interval)");
			return Type::Int;
		case Builtin::Reg:
			if (!ctx_.hit)
				return error_at(e.pos, e.text + " is a register at a probe's hit: in fn:NAME, fn:NAME:return, "
								"addr: and watch: probes only (a syscall probe has argN)");
			out_.more_regs |= e.number >= kFirstMoreReg;	// the hits copy them then
			return Type::Int;
		case Builtin::Comm:
			if (!ctx_.task)
				return error_at(e.pos, "'comm' exists only in syscall, fn, addr, watch and profile probes (not in BEGIN, "
						       "END, interval)");
			return Type::String;
		case Builtin::Kstack:
			if (!ctx_.kstack)
				return error_at(e.pos, "kstack exists only in fn:NAME, fn:NAME:return, addr:, watch: and "
						       "profile:hz:N probes (the kernel stack at a function's entry or "
						       "return, an instruction, an access or a sample)");
			out_.fn_kstack |= ctx_.fn;
			probe_->copies_kstack |= ctx_.fn;
			out_.profile_kstack |= ctx_.profile;
			return Type::Stack;
		case Builtin::Probe:
			return Type::String;
		case Builtin::Func:
			if (!ctx_.hit)
				return error_at(e.pos, "func is the function a probe hit is in: in fn:NAME, fn:NAME:return, "
						       "addr: and watch: probes only");
			out_.uses_func = true;
			return Type::String;
		case Builtin::WatchAddr:
			if (!ctx_.watch_only)
				return error_at(e.pos, "addr is the watched byte an access touched: in watch: probes only");
			return Type::Int;
		case Builtin::Nsecs:
		case Builtin::Curtask:
			return Type::Int;
		}
		return Type::Int;
	}

	Result<Type> unary_type(Expr &e)
	{
		auto t = type_of(*e.kids[0]);
		if (!t)
			return t;
		if (*t != Type::Int)
			return error_at(e.pos, "'" + e.text + "' takes a number, not " + type_name(*t));
		return Type::Int;
	}

	Result<Type> binary_type(Expr &e)
	{
		auto l = type_of(*e.kids[0]);
		if (!l)
			return l;
		auto r = type_of(*e.kids[1]);
		if (!r)
			return r;
		bool equality = e.text == "==" || e.text == "!=";
		if (*l == Type::Stack || *r == Type::Stack)
			return error_at(e.pos, kStackUse);
		if (equality && *l != *r)
			return error_at(e.pos, "'" + e.text + "' compares " + type_name(*l) + " with " + type_name(*r));
		if (!equality && (*l != Type::Int || *r != Type::Int))
			return error_at(e.pos, "'" + e.text + "' takes numbers; strings are compared with == and !=");
		return Type::Int;
	}

	// Map reads, deletes, prints and clears are checked once every
	// assignment is known: a map may be read in a probe written before the
	// one that assigns it.
	struct MapUse {
		std::string name;
		Pos pos;
		std::size_t keys;
		bool needs_keys_match;
		Expr *read = nullptr;
	};

	Result<void> check_reads()
	{
		for (MapUse &use : pending_reads_) {
			const MapInfo *m = out_.map(use.name);
			if (!m)
				return error_at(use.pos, use.name + " is never assigned");
			if ((use.read || use.needs_keys_match) && use.keys != m->keys.size())
				return error_at(use.pos, use.name + " has " + std::to_string(m->keys.size()) + " key" +
								 (m->keys.size() == 1 ? "" : "s") + ", not " +
								 std::to_string(use.keys));
			if (use.read && (m->kind == MapKind::Hist || m->kind == MapKind::Lhist))
				return error_at(use.pos, use.name + " holds a histogram: it can be printed, not read");
			if (use.read && auto_keys_mismatch(*use.read, *m))
				return error_at(use.pos, use.name + "'s keys are " + describe_keys(m->keys));
		}
		return {};
	}

	static bool auto_keys_mismatch(const Expr &read, const MapInfo &m)
	{
		for (std::size_t i = 0; i < read.kids.size(); i++)
			if (read.kids[i]->type != m.keys[i])
				return true;
		return false;
	}

	CheckedProgram &out_;
	const ParamLookup &params_;
	const SyscallParamLookup &syscall_params_;
	const KernelTypes *types_;
	Context ctx_;
	Probe *probe_ = nullptr;	// the probe being checked
	FetchProgram fetch_;	// its reads through arguments and str()
	std::vector<MapUse> pending_reads_;
};

// A top-level conjunct of the predicate that is `comm == "X"`, `pid == N`
// or `tid == N` (either way round) narrows what root must record.
struct Narrowing {
	std::optional<std::string> comm;
	std::optional<std::uint32_t> pid;
};

void find_narrowing(const Expr &e, Narrowing &out)
{
	if (e.kind != ExprKind::Binary)
		return;
	if (e.text == "&&") {
		find_narrowing(*e.kids[0], out);
		find_narrowing(*e.kids[1], out);
		return;
	}
	if (e.text != "==")
		return;
	for (int side = 0; side < 2; side++) {
		const Expr &name = *e.kids[side], &value = *e.kids[1 - side];
		if (name.kind != ExprKind::Builtin)
			continue;
		if (name.builtin == Builtin::Comm && value.kind == ExprKind::String && value.text.size() < 16)
			out.comm = value.text;
		if ((name.builtin == Builtin::Pid || name.builtin == Builtin::Tid) && value.kind == ExprKind::Int &&
		    value.number > 0 && value.number <= UINT32_MAX)
			out.pid = static_cast<std::uint32_t>(value.number);
	}
}

bool is_profile_point(const ProbePoint &p) { return p.kind == PointKind::Profile; }

// The filter every probe with a point of that kind shares; none when one
// has none. Root records only what passes it, and the predicate still runs
// on what it records, so the filter only has to let through a superset.
RootFilter common_root_filter(const Program &program, bool (*of_kind)(const ProbePoint &))
{
	std::optional<Narrowing> common;
	for (const Probe &probe : program.probes) {
		if (!std::any_of(probe.points.begin(), probe.points.end(), of_kind))
			continue;
		Narrowing n;
		if (probe.predicate)
			find_narrowing(*probe.predicate, n);
		if (!common) {
			common = n;
			continue;
		}
		if (common->comm != n.comm)
			common->comm.reset();
		if (common->pid != n.pid)
			common->pid.reset();
	}
	RootFilter f;
	if (common) {
		f.comm = common->comm.value_or("");
		f.pid = common->pid.value_or(0);
	}
	return f;
}

}  // namespace

Result<CheckedProgram> check_program(Program program, const SyscallLookup &lookup, const ParamLookup &params,
				     const KernelTypes *types, const SyscallParamLookup &syscall_params)
{
	CheckedProgram out;
	out.program = std::move(program);
	for (Probe &probe : out.program.probes)
		for (ProbePoint &p : probe.points)
			if (auto ok = resolve_point(p, lookup); !ok)
				return ok.error();
	// First: a probe whose whole predicate root tests counts in root (add_root_count).
	out.root_filter = common_root_filter(out.program, is_event_point);
	if (auto ok = Checker(out, params, syscall_params, types).run(); !ok)
		return ok.error();
	for (const Probe &probe : out.program.probes)
		for (const ProbePoint &p : probe.points) {
			out.has_syscall_probes |= is_syscall_point(p);
			out.has_fn_probes |= is_probe_hit_point(p);
			if (is_syscall_point(p))
				out.syscall_numbers.insert(p.any_syscall ? kEverySyscall : p.syscall_nr);
			if (p.kind != PointKind::Profile)
				continue;
			// Each CPU has one sampling timer: one rate for the program.
			if (out.profile_hz && out.profile_hz != p.profile_hz)
				return error_at(p.pos, "one profile rate per program: profile:hz:" +
							       std::to_string(out.profile_hz) + " came first");
			out.profile_hz = p.profile_hz;
		}
	out.profile_filter = common_root_filter(out.program, is_profile_point);
	if (out.syscall_numbers.count(kEverySyscall))
		out.syscall_numbers.clear();	// syscall:* records them all
	return out;
}

std::vector<std::string> function_points(const Program &program)
{
	std::vector<std::string> functions;
	for (const Probe &probe : program.probes)
		for (ProbePoint point : probe.points) {
			std::vector<std::string> parts = split(point.text);
			if (parts[0] == "fn" && resolve_function(point, parts))
				functions.push_back(qualified_function(point));
			else if (parts[0] == "addr" && resolve_addr(point, parts) && !point.function.empty())
				functions.push_back(point.function);
		}
	return functions;
}

Result<CheckedProgram> compile_program(std::string_view source, const SyscallLookup &lookup,
				       const ParamLookup &params, const KernelTypes *types,
				       const SyscallParamLookup &syscall_params)
{
	auto program = parse_program(source);
	if (!program)
		return program.error();
	return check_program(std::move(*program), lookup, params, types, syscall_params);
}

}  // namespace vtice::probes
