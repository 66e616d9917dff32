// libFuzzer target: the probe language. The input is a program, then (after
// a NUL byte) events to run it over. Any text must be parsed and checked
// or refused with an error inside the text; a program that checks must have
// fetch programs root accepts (reads through arguments, over made-up types
// with a cycle and a union), and must run
// over any events (any numbers, comms, times) to the end and print its maps
// as text and JSON, within its map bound, without a fault.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include "checker.hpp"
#include "diagnostic.hpp"
#include "output.hpp"
#include "runtime.hpp"

namespace pr = vtice::probes;

namespace {

std::optional<std::uint64_t> lookup(std::string_view name)
{
	if (name == "read")
		return 0;
	if (name == "write")
		return 1;
	if (name == "openat")
		return 257;
	return std::nullopt;
}

// Made-up types for reads through arguments: 1 struct s { int i at 0;
// struct s *next at 8; char name[16] at 16; char *str at 32; union u u at
// 40; int lo:5 at bit 3 of 44; a 62-bit u64 wide at bit 7 of 44 (more than
// 8 bytes: refused); int nums[] at 48 } (a cycle through next), 2 int,
// 3 struct s *, 4 char[16], 5 char *, 6 char, 7 union u { u16 w at 0;
// struct s *back at 0 }, 8 u16, 9 int[].
class FuzzTypes final : public pr::KernelTypes {
public:
	vtice::Result<std::uint32_t> find(std::string_view name) const override
	{
		if (name == "struct s" || name == "struct task_struct")	// curtask reads a struct s
			return 1u;
		if (name == "union u")
			return 7u;
		return vtice::make_error("no " + std::string(name));
	}
	std::optional<std::uint32_t> pointee(std::uint32_t id) const override
	{
		if (id == 3)
			return 1u;
		if (id == 5)
			return 6u;
		return std::nullopt;
	}
	vtice::Result<Field> field(std::uint32_t id, std::string_view name) const override
	{
		static const struct {
			std::uint32_t in;
			const char *name;
			Field f;
		} fields[] = {{1, "i", {0, 2}},	 {1, "next", {8, 3}}, {1, "name", {16, 4}}, {1, "str", {32, 5}},
			      {1, "u", {40, 7}}, {7, "w", {0, 8}},    {7, "back", {0, 3}},
			      {1, "lo", {44, 2, 3, 5}}, {1, "wide", {44, 8, 7, 62}}, {1, "nums", {48, 9}}};
		for (const auto &f : fields)
			if (f.in == id && name == f.name)
				return f.f;
		return vtice::make_error("no field");
	}
	std::optional<Scalar> scalar(std::uint32_t id) const override
	{
		switch (id) {
		case 2: return Scalar{4, true};
		case 3:
		case 5: return Scalar{8, false};
		case 6: return Scalar{1, true};
		case 8: return Scalar{2, false};
		default: return std::nullopt;
		}
	}
	bool is_char_array(std::uint32_t id) const override { return id == 4; }
	std::optional<Array> array(std::uint32_t id) const override
	{
		if (id == 4)
			return Array{6, 16};
		if (id == 9)
			return Array{2, 0};	// a flexible array of int
		return std::nullopt;
	}
	std::optional<std::uint64_t> size(std::uint32_t id) const override
	{
		static const std::uint64_t sizes[] = {0, 48, 4, 8, 16, 8, 1, 8, 2, 0};
		return id < std::size(sizes) && sizes[id] ? std::optional<std::uint64_t>(sizes[id]) : std::nullopt;
	}
	bool is_struct(std::uint32_t id) const override { return id == 1 || id == 7; }
	std::string name(std::uint32_t id) const override { return "type " + std::to_string(id); }
	// A function whose name starts with 's' returns a struct s *, with 'c' a
	// char *, with 'v' nothing; the others an int.
	std::optional<std::uint32_t> return_type(std::string_view function) const override
	{
		switch (function.empty() ? 0 : function[0]) {
		case 's': return 3u;
		case 'c': return 5u;
		case 'v': return std::nullopt;
		default: return 2u;
		}
	}
};

// Every function takes the same made-up parameters: each width, signed and
// not, a struct by value (refused), and a struct s *.
vtice::Result<std::vector<pr::Param>> params(std::string_view function)
{
	if (function.empty())
		return vtice::make_error("no function");
	return std::vector<pr::Param>{{"a", 4, true, "int", 2},	     {"b", 8, false, "char *", 5},
				      {"c", 2, false, "u16", 8},     {"d", 1, true, "s8", 6},
				      {"e", 0, false, "struct timespec64", 0}, {"f", 8, false, "struct s *", 3}};
}

// The rules root checks a fetch program by (ioctl.h): what the checker
// builds must pass them, or arming it would fail.
void check_fetch(const std::vector<pr::FetchOp> &ops)
{
	unsigned slots = 0, strings = 0, keys = 0;
	if (ops.size() > pr::kMaxFetchOps ||
	    (!ops.empty() && ops[0].code != pr::FetchCode::Arg && ops[0].code != pr::FetchCode::Retval &&
	     ops[0].code != pr::FetchCode::Curtask && ops[0].code != pr::FetchCode::Reg &&
	     ops[0].code != pr::FetchCode::Count &&
	     !(ops[0].code == pr::FetchCode::Keyed && (ops[0].arg & 0xf) != 0)))	// KEYED by the task or CPU alone
		std::abort();
	for (std::size_t i = 0; i < ops.size(); i++) {
		const pr::FetchOp &op = ops[i];
		bool ok = false;
		switch (op.code) {
		case pr::FetchCode::Arg: ok = op.arg < 6 && !op.imm; break;
		case pr::FetchCode::Add: ok = !op.arg; break;
		case pr::FetchCode::Load: ok = (op.arg == 1 || op.arg == 2 || op.arg == 4 || op.arg == 8) && !op.imm; break;
		case pr::FetchCode::Value:
			ok = op.arg < pr::kMaxFetchValues && !(slots & (1u << op.arg)) && !op.imm;
			slots |= 1u << (op.arg & 31);
			break;
		case pr::FetchCode::String: ok = ++strings == 1 && !op.arg && !op.imm; break;
		case pr::FetchCode::Retval:
		case pr::FetchCode::Curtask: ok = !op.arg && !op.imm; break;
		case pr::FetchCode::Reg: ok = op.arg < 16 && !op.imm; break;	// VTICE_FETCH_REGS
		case pr::FetchCode::Index: ok = (op.arg >> 4) < 7 && op.imm > 0; break;	// VTICE_FETCH_INDEX_WIDTHS
		case pr::FetchCode::Keep: ok = (op.arg & 0xf) < 6 && (op.arg >> 4) < 7; break;	// VTICE_FETCH_CMPS
		case pr::FetchCode::Count: ok = !op.arg && !op.imm && i + 1 == ops.size(); break;	// the last op
		case pr::FetchCode::Sum:
		case pr::FetchCode::Min:
		case pr::FetchCode::Max:
		case pr::FetchCode::Hist: ok = !(op.arg & 0xf) && (op.arg >> 4) < 7 && !op.imm && i && i + 1 == ops.size(); break;
		case pr::FetchCode::Lhist: ok = !(op.arg & 0xf) && (op.arg >> 4) < 7 && op.imm > 0 && i && i + 1 == ops.size(); break;
		case pr::FetchCode::Key: ok = !(op.arg & 0xf) && (op.arg >> 4) < 7 && !op.imm && i && ++keys <= 2; break;
		case pr::FetchCode::Keyed: {
			// imm: 0 counts; SUM, MIN or MAX keeps the operand before it. The key: with no KEY the
			// accumulator (no imm) or the task's or CPU's; with one, KEY's (key 0, an imm) or the pid,
			// tid or CPU beside it; with two, both KEYs' (key 0)
			bool keeps = op.imm == static_cast<int>(pr::FetchCode::Sum) ||
				     op.imm == static_cast<int>(pr::FetchCode::Min) ||
				     op.imm == static_cast<int>(pr::FetchCode::Max);
			unsigned kind = op.arg & 0xf;
			bool keyed_ok = (!op.imm || keeps) &&
					(keys == 0   ? !op.imm || (kind && i)
					 : keys == 1 ? (kind ? kind != 1 : keeps)	// 1: the comm, which fills the key
						     : !kind);
			ok = (op.arg & 0xf) < 5 && (op.arg >> 4) < 7 && keyed_ok && ((op.arg & 0xf) || i) &&
			     i + 1 == ops.size();
			break;
		}
		case pr::FetchCode::End: break;
		}
		if (!ok || (op.base && op.code != pr::FetchCode::Lhist))	// only LHIST takes a base
			std::abort();
	}
	if (keys && ops.back().code != pr::FetchCode::Keyed)	// a KEY is for the KEYED that ends the program
		std::abort();
}

// Events from bytes: each takes 24 of them.
void run_events(pr::Runtime &rt, const std::uint8_t *data, std::size_t size)
{
	static const char *const comms[] = {"a", "bash", "", "vtprobe"};
	std::uint64_t now = 0;
	for (std::size_t at = 0; at + 24 <= size && !rt.exited(); at += 24) {
		pr::ProbeEvent ev;
		static const pr::PointKind kinds[] = {pr::PointKind::SyscallEnter, pr::PointKind::SyscallReturn,
						      pr::PointKind::FnEntry, pr::PointKind::Profile, pr::PointKind::Watch};
		static const char *const stacks[] = {"", "[user]", "leaf", "read_zero\nvfs_read\nksys_read"};
		ev.kind = kinds[data[at] % 5];
		ev.watch_addr = 0xffff888000001000ull + (data[at + 2] & 15);
		ev.watch_access = data[at + 2] >> 4 & 3;
		ev.func = comms[data[at + 2] >> 6 & 3];
		ev.kstack = stacks[data[at + 1] >> 5 & 3];
		ev.address = 0xffffffff81000000ull + (data[at + 1] & 3);
		ev.nr = data[at] & 4 ? 257 : data[at + 1] % 3;
		std::memcpy(&ev.args[data[at + 2] % 6], data + at + 3, 8);
		std::memcpy(&ev.values[data[at + 2] % pr::kMaxFetchValues], data + at + 3, 8);
		ev.values_unreadable = data[at + 12] >> 4;
		ev.retval = static_cast<std::int8_t>(data[at + 11]) * 1000003LL;
		ev.comm = comms[data[at + 12] % 4];
		ev.pid = data[at + 13] % 8;
		ev.tid = data[at + 14] % 16;
		ev.cpu = data[at + 15] % 4;
		std::uint64_t step;
		std::memcpy(&step, data + at + 16, 8);
		now += step >> 20;
		ev.nsecs = now;
		rt.on_event(ev);
		if (data[at + 1] & 0x80)
			rt.tick(now);
	}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	const void *nul = std::memchr(data, 0, size);
	std::size_t text_len = nul ? static_cast<std::size_t>(static_cast<const std::uint8_t *>(nul) - data) : size;
	std::string_view source(reinterpret_cast<const char *>(data), text_len);
	static const FuzzTypes types;
	auto program = pr::compile_program(source, lookup, params, &types);
	if (!program) {
		if (program.error().offset && *program.error().offset > source.size())
			std::abort();	// an error must point inside the program
		std::string shown = pr::format_diagnostic(source, program.error());
		if (shown.empty())
			std::abort();
		return 0;
	}
	for (const auto &probe : program->program.probes) {
		check_fetch(probe.fetch);
		pr::FetchCode last = probe.fetch.empty() ? pr::FetchCode::End : probe.fetch.back().code;
		bool keeps = last == pr::FetchCode::Sum || last == pr::FetchCode::Min || last == pr::FetchCode::Max ||
			     last == pr::FetchCode::Hist || last == pr::FetchCode::Lhist || last == pr::FetchCode::Keyed;
		bool ends_in_count = last == pr::FetchCode::Count || keeps;
		if (probe.count_in_root != ends_in_count || (probe.root_value != pr::RootValue::None) != keeps ||
		    (probe.count_in_root && probe.body.size() != 1))
			std::abort();	// root counts exactly the probes whose program ends in COUNT, SUM, MIN, MAX, HIST, LHIST or KEYED
		if (probe.root_key != pr::RootKey::None && (!probe.count_in_root || last == pr::FetchCode::Keyed))
			std::abort();	// a key by address (func, probe) is root's count of each address, no slot
		if (probe.root_value == pr::RootValue::Keys &&
		    (probe.root_key_words.size() != probe.body[0].keys.size() ||
		     std::any_of(probe.root_key_words.begin(), probe.root_key_words.end(), [](auto w) { return w > 1; })))
			std::abort();	// each key part in one of a slot's two words
	}
	// The console resolves fn:NAME and watch: symbols in the running kernel; here each gets one of a few addresses.
	for (auto &probe : program->program.probes)
		for (auto &point : probe.points)
			if (point.kind == pr::PointKind::FnEntry)
				point.address = 0xffffffff81000000ull + point.function.size() % 4;
			else if (point.kind == pr::PointKind::Watch && !point.function.empty())
				point.address = 0xffff888000001000ull + point.function.size() % 8;
	char *buf = nullptr;
	std::size_t len = 0;
	std::FILE *sink = open_memstream(&buf, &len);
	{
		pr::TextOutput text(sink);
		pr::JsonOutput json(sink);
		pr::Output &out = (text_len & 1) ? static_cast<pr::Output &>(json) : text;
		constexpr std::size_t kEntries = 64;
		pr::Runtime rt(*program, out, kEntries);
		rt.begin(0);
		std::size_t events = nul ? text_len + 1 : size;
		run_events(rt, data + events, size - events);
		rt.finish(~0ull);
		for (std::size_t m = 0; m < program->maps.size(); m++)
			if (rt.maps().entries(m).size() > kEntries)
				std::abort();
	}
	std::fclose(sink);
	std::free(buf);
	return 0;
}
