#include "runtime.hpp"

#include <algorithm>

namespace vtice::probes {

struct Runtime::Fired {
	const ProbePoint *point = nullptr;
	const ProbeEvent *event = nullptr;	// null in BEGIN, END, interval
	std::uint64_t nsecs = 0;
};

Runtime::Runtime(const CheckedProgram &program, Output &out, std::size_t max_map_entries)
	: program_(program), out_(out), maps_(program.maps, max_map_entries)
{
	std::size_t next_format = 0;
	for (const Probe &probe : program.program.probes)
		for (const Stmt &s : probe.body)
			if (s.kind == StmtKind::Printf)
				formats_[&s] = &program.formats[next_format++];
}

void Runtime::begin(std::uint64_t nsecs)
{
	start_ = nsecs;
	for (const Probe &probe : program_.program.probes)
		for (const ProbePoint &p : probe.points)
			next_interval_.push_back(p.kind == PointKind::Interval ? nsecs + p.interval_ns : UINT64_MAX);
	fire_points(PointKind::Begin, Fired{nullptr, nullptr, nsecs});
}

void Runtime::on_event(const ProbeEvent &ev)
{
	for (const Probe &probe : program_.program.probes) {
		if (exited_)
			return;
		for (const ProbePoint &p : probe.points)
			if (matches(p, ev)) {
				run_probe(probe, Fired{&p, &ev, ev.nsecs});
				break;	// once per probe, whichever of its points matched
			}
	}
}

// A function probe's hit carries only its address (ev.kind FnEntry):
// whether that is an entry, one of a function's returns or an addr:, the
// point's addresses say. A watch probe's, the byte and what was done to it.
bool Runtime::matches(const ProbePoint &p, const ProbeEvent &ev)
{
	if (ev.kind == PointKind::FnEntry && p.kind == PointKind::FnReturn)
		return std::find(p.return_sites.begin(), p.return_sites.end(), ev.address) != p.return_sites.end();
	if (ev.kind == PointKind::FnEntry && (p.kind == PointKind::FnEntry || p.kind == PointKind::Addr))
		return p.address == ev.address;
	if (ev.kind == PointKind::Watch && p.kind == PointKind::Watch)
		return (ev.watch_access & p.watch_access) && ev.watch_addr >= p.address &&
		       ev.watch_addr - p.address < p.watch_len;
	if (p.kind != ev.kind)
		return false;
	if (p.kind == PointKind::Profile)
		return true;	// one rate per program: every sample is every profile point's
	return p.any_syscall || p.syscall_nr == ev.nr;
}

void Runtime::tick(std::uint64_t now)
{
	std::size_t i = 0;
	for (const Probe &probe : program_.program.probes)
		for (const ProbePoint &p : probe.points) {
			std::uint64_t &due = next_interval_[i++];
			if (exited_ || p.kind != PointKind::Interval || now < due)
				continue;
			// A late poll fires once, not once per period it missed.
			while (due <= now)
				due += p.interval_ns;
			run_probe(probe, Fired{&p, nullptr, now});
		}
}

void Runtime::finish(std::uint64_t nsecs)
{
	exited_ = false;	// END runs after exit() too
	fire_points(PointKind::End, Fired{nullptr, nullptr, nsecs});
	for (std::size_t m = 0; m < program_.maps.size(); m++)
		if (!maps_.entries(m).empty())
			out_.map(program_.maps[m], maps_.entries(m));
}

void Runtime::fire_points(PointKind kind, const Fired &base)
{
	for (const Probe &probe : program_.program.probes)
		for (const ProbePoint &p : probe.points)
			if (p.kind == kind && !exited_) {
				Fired f = base;
				f.point = &p;
				run_probe(probe, f);
			}
}

void Runtime::fold_root(const Probe &probe, const Key &key, std::uint64_t n, std::int64_t value)
{
	std::size_t index = program_.map_index(probe.body[0].map);
	Cell *cell = maps_.update(index, key);
	if (!cell)
		return;
	// Root's value is one sample of the map's kind (a sum's growth, a least
	// or greatest value, nothing for a count) for all n hits.
	aggregate(program_.maps[index], *cell, value);
	cell->count += static_cast<std::int64_t>(n - 1);
	stats_.fired += n;
}

void Runtime::add_root_count(const Probe &probe, std::uint64_t n, std::int64_t value)
{
	if (!exited_ && n && probe.count_in_root)
		fold_root(probe, Key{}, n, value);
}

void Runtime::add_root_hist(const Probe &probe, const std::vector<std::uint64_t> &grown, const Key &key)
{
	std::uint64_t n = 0;
	for (std::uint64_t hits : grown)
		n += hits;
	bool linear = probe.root_value == RootValue::Lhist;
	if (exited_ || !n || (probe.root_value != RootValue::Hist && !linear))
		return;
	std::size_t index = program_.map_index(probe.body[0].map);
	Cell *cell = maps_.update(index, key);
	if (!cell)
		return;
	// Root's buckets (ioctl.h) are the map's, one below: for lhist() the
	// checker made them as wide as the map's, starting where it does, and
	// root's last holds the map's top one and what would follow it.
	std::int64_t top = linear ? lhist_buckets(program_.maps[index]) : 64;
	for (std::size_t i = 0; i < grown.size(); i++)
		if (grown[i])
			cell->buckets[std::min(static_cast<std::int64_t>(i) - 1, top)] += grown[i];
	cell->count += static_cast<std::int64_t>(n);
	stats_.fired += n;
}

void Runtime::add_root_keyed(const Probe &probe, const Value &key, std::uint64_t n, std::int64_t value)
{
	add_root_keyed(probe, Key{key}, n, value);
}

void Runtime::add_root_keyed(const Probe &probe, const Key &key, std::uint64_t n, std::int64_t value)
{
	if (!exited_ && n && (probe.root_value == RootValue::Keys || probe.root_key != RootKey::None))
		fold_root(probe, key, n, value);
}

void Runtime::run_probe(const Probe &probe, const Fired &fired)
{
	if (probe.predicate && eval_int(*probe.predicate, fired) == 0)
		return;
	stats_.fired++;
	for (const Stmt &s : probe.body) {
		run_stmt(s, fired);
		if (exited_)
			return;
	}
}

void Runtime::run_stmt(const Stmt &s, const Fired &fired)
{
	switch (s.kind) {
	case StmtKind::Assign:
		assign(s, fired);
		return;
	case StmtKind::Printf: {
		std::vector<Value> values;
		for (const ExprPtr &a : s.args)
			values.push_back(eval(*a, fired));
		out_.text(apply_format(*formats_.at(&s), values));
		return;
	}
	case StmtKind::Delete: {
		std::size_t m = program_.map_index(s.map);
		if (s.keys.empty())
			maps_.clear(m);
		else
			maps_.erase(m, key_of(s.keys, fired));
		return;
	}
	case StmtKind::Print:
		out_.map(*program_.map(s.map), maps_.entries(program_.map_index(s.map)));
		return;
	case StmtKind::Clear:
		maps_.clear(program_.map_index(s.map));
		return;
	case StmtKind::Exit:
		exited_ = true;
		return;
	}
}

void Runtime::assign(const Stmt &s, const Fired &fired)
{
	std::size_t index = program_.map_index(s.map);
	const MapInfo &info = program_.maps[index];
	const Expr &v = *s.value;
	// The value first: a map full of other keys still refuses this one.
	bool aggregates = is_aggregation(v);
	Value value = aggregates ? Value{std::int64_t{0}} : eval(v, fired);
	std::int64_t sample = aggregates && !v.kids.empty() ? eval_int(*v.kids[0], fired) : 0;
	Cell *cell = maps_.update(index, key_of(s.keys, fired));
	if (!cell)
		return;
	if (aggregates)
		aggregate(info, *cell, sample);
	else
		cell->scalar = std::move(value);
}

Key Runtime::key_of(const std::vector<ExprPtr> &keys, const Fired &fired)
{
	Key key;
	for (const ExprPtr &k : keys)
		key.push_back(eval(*k, fired));
	return key;
}

namespace {

// An argument as its type has it: the low bytes of its register, sign- or
// zero-extended (an int -100 in RDI reads -100, not 4294967196).
// The low bits of v, sign-extended when is_signed.
std::int64_t widen(std::uint64_t v, unsigned bits, bool is_signed)
{
	if (bits >= 64)
		return static_cast<std::int64_t>(v);
	std::uint64_t low = v & ((std::uint64_t{1} << bits) - 1);
	std::uint64_t sign = std::uint64_t{1} << (bits - 1);
	if (is_signed && (low & sign))
		low |= ~((std::uint64_t{1} << bits) - 1);
	return static_cast<std::int64_t>(low);
}

std::int64_t argument_value(const Expr &e, std::uint64_t reg)
{
	return widen(reg, 8u * e.bytes, e.is_signed);
}

}  // namespace

Value Runtime::eval(const Expr &e, const Fired &fired)
{
	switch (e.kind) {
	case ExprKind::String:
		return e.text;
	case ExprKind::Builtin:	// curtask is a read root made at the hit
		return e.builtin == Builtin::Curtask ? Value{read_through(e, fired)} : builtin(e, fired);
	case ExprKind::MapRead:
		return map_read(e, fired);
	case ExprKind::Call:	// str(argN), the checker's only call outside a map's value
		return fired.event ? fired.event->str : std::string();
	case ExprKind::Member:
	case ExprKind::Cast:
	case ExprKind::Index:
		return read_through(e, fired);
	case ExprKind::Binary:
		if (e.kids[0]->type == Type::String) {
			bool equal = eval(*e.kids[0], fired) == eval(*e.kids[1], fired);
			return std::int64_t{e.text == "==" ? equal : !equal};
		}
		return binary(e, fired);
	default:
		return eval_int(e, fired);
	}
}

// A read through an argument: its VALUE slot, widened by its type.
std::int64_t Runtime::read_through(const Expr &e, const Fired &fired)
{
	if (!fired.event)
		return 0;
	auto slot = static_cast<std::size_t>(e.number);
	if (fired.event->values_unreadable & (1u << slot))
		stats_.unreadable_reads++;
	std::uint64_t v = fired.event->values[slot];
	if (e.bits)	// a bitfield: its bits of the bytes root loaded
		return widen(v >> e.bit_shift, e.bits, e.is_signed);
	return argument_value(e, v);
}

std::int64_t Runtime::eval_int(const Expr &e, const Fired &fired)
{
	switch (e.kind) {
	case ExprKind::Int:
		return e.number;
	case ExprKind::Unary: {
		std::uint64_t v = static_cast<std::uint64_t>(eval_int(*e.kids[0], fired));
		if (e.text == "!")
			return v == 0;
		return static_cast<std::int64_t>(e.text == "-" ? 0 - v : ~v);
	}
	default: {
		Value v = eval(e, fired);
		const std::int64_t *i = std::get_if<std::int64_t>(&v);
		return i ? *i : 0;
	}
	}
}

// 64-bit two's complement throughout: + - * wrap, >> is logical, a shift
// by 64 or more gives 0, and x / 0 and x % 0 give 0 (counted).
std::int64_t Runtime::binary(const Expr &e, const Fired &fired)
{
	const std::string &op = e.text;
	std::int64_t a = eval_int(*e.kids[0], fired);
	if (op == "&&" || op == "||") {	// short-circuit, as in C
		if ((op == "&&") == (a == 0))
			return op == "||";
		return eval_int(*e.kids[1], fired) != 0;
	}
	std::int64_t b = eval_int(*e.kids[1], fired);
	std::uint64_t ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
	auto wrap = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
	if (op == "+") return wrap(ua + ub);
	if (op == "-") return wrap(ua - ub);
	if (op == "*") return wrap(ua * ub);
	if (op == "/" || op == "%") {
		if (b == 0) {
			stats_.division_by_zero++;
			return 0;
		}
		if (b == -1)	// INT64_MIN / -1 overflows in C: wrap instead
			return op == "/" ? wrap(0 - ua) : 0;
		return op == "/" ? a / b : a % b;
	}
	if (op == "&") return a & b;
	if (op == "|") return a | b;
	if (op == "^") return a ^ b;
	if (op == "<<") return ub >= 64 ? 0 : wrap(ua << ub);
	if (op == ">>") return ub >= 64 ? 0 : wrap(ua >> ub);
	if (op == "==") return a == b;
	if (op == "!=") return a != b;
	if (op == "<") return a < b;
	if (op == "<=") return a <= b;
	if (op == ">") return a > b;
	return a >= b;
}

namespace {

// reg("NAME") as the parser numbered it: arg0..arg5's registers, RAX, RIP.
std::int64_t reg_value(const ProbeEvent &ev, std::int64_t n)
{
	if (n >= 0 && n < static_cast<std::int64_t>(ev.args.size()))
		return static_cast<std::int64_t>(ev.args[static_cast<std::size_t>(n)]);
	if (n >= kFirstMoreReg && n - kFirstMoreReg < static_cast<std::int64_t>(ev.more_regs.size()))
		return static_cast<std::int64_t>(ev.more_regs[static_cast<std::size_t>(n - kFirstMoreReg)]);
	return n == kRegRax ? ev.retval : static_cast<std::int64_t>(ev.address);
}

}  // namespace

Value Runtime::builtin(const Expr &e, const Fired &fired) const
{
	const ProbeEvent *ev = fired.event;
	switch (e.builtin) {
	case Builtin::Nsecs:
		return static_cast<std::int64_t>(fired.nsecs);
	case Builtin::Probe:
		return fired.point ? fired.point->text : std::string();
	default:
		break;
	}
	if (!ev)	// the checker keeps task values out of BEGIN, END, interval
		return e.type == Type::Int ? Value{std::int64_t{0}} : Value{std::string()};
	switch (e.builtin) {
	case Builtin::Pid: return std::int64_t{ev->pid};
	case Builtin::Tid: return std::int64_t{ev->tid};
	case Builtin::Cpu: return std::int64_t{ev->cpu};
	case Builtin::Comm: return ev->comm;
	case Builtin::Kstack: return ev->kstack;
	case Builtin::Retval: return argument_value(e, static_cast<std::uint64_t>(ev->retval));	// the return type's width
	case Builtin::Arg: return argument_value(e, ev->args[static_cast<std::size_t>(e.number)]);
	case Builtin::Reg: return reg_value(*ev, e.number);
	case Builtin::Func: return ev->func;
	case Builtin::WatchAddr: return static_cast<std::int64_t>(ev->watch_addr);
	default: return std::int64_t{0};
	}
}

Value Runtime::map_read(const Expr &e, const Fired &fired)
{
	std::size_t index = program_.map_index(e.text);
	const MapInfo &info = program_.maps[index];
	const Cell *cell = maps_.find(index, key_of(e.kids, fired));
	if (info.kind == MapKind::String)
		return cell ? cell->scalar : Value{std::string()};
	return cell ? aggregate_value(info, *cell) : 0;
}

}  // namespace vtice::probes
