#include "probe_functions.hpp"

#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "diagnostic.hpp"
#include "hex.hpp"
#include "insn_boundary.hpp"
#include "kallsyms_modules.hpp"
#include "return_sites.hpp"
#include "symbol_source.hpp"
#include "trace/kcore.hpp"
#include "trace_common.hpp"

namespace vtice::console {
namespace {

bool starts_with_endbr(const std::vector<std::uint8_t> &b)
{
	static const std::uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	static const std::uint8_t sealed[4] = {0x0f, 0x1f, 0x40, 0xd6};	// IBT's poison NOP
	return b.size() >= 4 && (std::memcmp(b.data(), endbr64, 4) == 0 || std::memcmp(b.data(), sealed, 4) == 0);
}

// Longer than any kernel function: a symbol that runs on this far is not one.
constexpr std::uint64_t kMaxFunctionBytes = 1 << 20;

bool is_return_thunk(const dbg::SymbolList &symbols, std::uint64_t target)
{
	auto hit = symbols.symbolize(target);
	return hit && hit->offset == 0 && hit->name.find("return_thunk") != std::string::npos;
}

// fn:NAME:return: the RETs in the function's live text (what the kernel
// patched them into at boot, read from kcore).
Result<void> find_returns(probes::ProbePoint &point, std::uint64_t start, const dbg::SymbolList &symbols,
			  const KernelTextReader &read, std::vector<std::string> &notes)
{
	auto end = symbols.next_start(start);
	if (!end || *end - start > kMaxFunctionBytes)
		return probes::error_at(point.pos, "cannot tell where " + point.function + " ends (no symbol after it)");
	auto text = read(start, *end - start);
	if (!text)
		return probes::error_at(point.pos, "cannot read " + point.function + ": " + text.error().message);
	Disassembler disasm;
	auto found = find_return_sites(*text, start, disasm,
				       [&](std::uint64_t target) { return is_return_thunk(symbols, target); });
	if (!found)
		return probes::error_at(point.pos, point.function + ": " + found.error().message);
	if (found->sites.empty())
		return probes::error_at(point.pos, point.function + " has no RET of its own (it leaves only by tail "
								    "calls or never returns)");
	if (!found->tail_calls.empty())
		notes.push_back(point.text + ": " + point.function + " also leaves through " +
				std::to_string(found->tail_calls.size()) + " jump(s) to other code (the first at +" +
				dbg::hex(found->tail_calls.front() - start) +
				"): the callee returns for it there, unseen");
	point.return_sites = std::move(found->sites);
	return {};
}

// addr: and watch: NAME+OFFSET: the address from kallsyms (a point written
// as 0xADDRESS has it already).
Result<void> place_at_symbol(probes::ProbePoint &point, const dbg::SymbolList &symbols, const std::string &kallsyms)
{
	if (point.function.empty())
		return {};
	auto base = symbols.lookup(point.function);
	if (!base || !*base)
		return probes::error_at(point.pos, "no kernel symbol '" + point.function + "' in " + kallsyms);
	point.address = *base + point.offset;
	return {};
}

// addr:: NAME+OFFSET found in kallsyms (0xADDRESS as given), and an
// instruction must start there: decoded from the start of its symbol.
Result<void> resolve_addr(probes::ProbePoint &point, const dbg::SymbolList &symbols, const KernelTextReader &read,
			  const std::string &kallsyms)
{
	if (auto ok = place_at_symbol(point, symbols, kallsyms); !ok)
		return ok;
	auto hit = symbols.symbolize(point.address);
	if (!hit)
		return probes::error_at(point.pos, dbg::hex(point.address) + " is in no symbol of the running kernel");
	if (!symbols.text_at(point.address))
		return probes::error_at(point.pos, point.text + ": " + hit->name + " is not code (not a 't' or 'T' "
								     "symbol in " + kallsyms + ")");
	auto text = read(hit->start, hit->offset + 16);
	if (!text)
		return probes::error_at(point.pos, "cannot read " + hit->name + ": " + text.error().message);
	Disassembler disasm;
	if (auto ok = check_instruction_start(*text, hit->start, point.address, disasm); !ok)
		return probes::error_at(point.pos, point.text + ": in " + hit->name + ", " + ok.error().message);
	return {};
}

// Kernel addresses are the upper half (x86-64's canonical form, 48 or 57 bits).
constexpr std::uint64_t kKernelHalf = 0xffff800000000000ull;

// watch:: NAME+OFFSET found in kallsyms (any symbol: data is what is
// watched), 0xADDRESS as given; the range must be kernel memory (the
// module checks that it is mapped).
Result<void> resolve_watch(probes::ProbePoint &point, const dbg::SymbolList &symbols, const std::string &kallsyms)
{
	if (auto ok = place_at_symbol(point, symbols, kallsyms); !ok)
		return ok;
	if (point.address < kKernelHalf || point.address + point.watch_len < point.address)
		return probes::error_at(point.pos, point.text + ": " + dbg::hex(point.address) +
							   " is not kernel memory (watch: takes the kernel's own addresses)");
	return {};
}

// fn:NAME's or fn:MODULE:NAME's address; it must be code.
Result<std::uint64_t> function_address(const probes::ProbePoint &point, const dbg::SymbolList &symbols,
				       const std::string &symbols_name, const ModuleFunctionLookup &in_module)
{
	std::string name = probes::qualified_function(point);
	if (!point.module.empty()) {
		auto address = in_module(point.module, point.function);
		if (!address)
			return probes::error_at(point.pos, point.text + ": " + address.error().message);
		if (!symbols.text_at(*address))
			return probes::error_at(point.pos, name + " is not a function");
		return *address;
	}
	auto address = symbols.lookup(point.function);
	if (!address || !*address)
		return probes::error_at(point.pos, "no kernel function '" + name + "' in " + symbols_name);
	if (!symbols.text_at(*address))
		return probes::error_at(point.pos, name + " is not a function (not a 't' or 'T' symbol in " +
							   symbols_name + ")");
	return *address;
}

}  // namespace

Result<std::vector<std::string>> resolve_function_points(probes::CheckedProgram &program,
							 const dbg::SymbolList &symbols, const std::string &symbols_name,
							 const KernelTextReader &read, const ModuleFunctionLookup &in_module)
{
	std::vector<std::string> notes;
	for (auto &probe : program.program.probes)
		for (auto &point : probe.points) {
			if (point.kind == probes::PointKind::Watch) {
				if (auto ok = resolve_watch(point, symbols, symbols_name); !ok)
					return ok.error();
				continue;
			}
			if (!probes::is_hidden_breakpoint(point))
				continue;
			if (point.kind == probes::PointKind::Addr) {
				if (auto ok = resolve_addr(point, symbols, read, symbols_name); !ok)
					return ok.error();
				continue;
			}
			auto address = function_address(point, symbols, symbols_name, in_module);
			if (!address)
				return address.error();
			if (point.kind == probes::PointKind::FnReturn) {
				if (auto ok = find_returns(point, *address, symbols, read, notes); !ok)
					return ok.error();
				continue;
			}
			auto head = read(*address, 4);
			if (!head)
				return probes::error_at(point.pos, "cannot read " + point.function + ": " + head.error().message);
			point.address = *address + (starts_with_endbr(*head) ? 4 : 0);
		}
	return notes;
}

Result<std::vector<std::string>> resolve_function_points(probes::CheckedProgram &program,
							 const std::string &kallsyms, const std::string &kcore_path)
{
	if (!program.has_fn_probes)
		return std::vector<std::string>();
	auto text = read_kallsyms_text(kallsyms);
	if (!text)
		return text.error();
	auto symbols = parse_running_kallsyms(*text, kallsyms, "_text");
	if (!symbols)
		return symbols.error();
	auto in_module = [&](std::string_view module, std::string_view function) -> Result<std::uint64_t> {
		auto address = function_in_module(*text, module, function);
		if (!address)
			return make_error(address.error().message + " (" + kallsyms + ")");
		return address;
	};
	auto kcore = dbg::Kcore::open(kcore_path);
	if (!kcore)
		return kcore.error();
	auto read = [&](std::uint64_t address, std::size_t length) -> Result<std::vector<std::uint8_t>> {
		auto bytes = kcore->read(address, length);
		if (!bytes)
			return make_error(kcore_path + ": " + bytes.error().message);
		return bytes;
	};
	return resolve_function_points(program, **symbols, kallsyms, read, in_module);
}

namespace {

// The slot of an address to arm: the one it has already (a return site
// two probes share, a function two probes enter), or a new one whose
// program is 0 (none) until the caller sets it.
Result<std::uint32_t> slot_for(vtice_probes &req, const probes::ProbePoint &point, std::uint64_t address)
{
	auto *seen = std::find(req.addrs, req.addrs + req.count, address);
	if (seen != req.addrs + req.count)
		return static_cast<std::uint32_t>(seen - req.addrs);
	if (req.count == VTICE_PROBES_MAX)
		return probes::error_at(point.pos, "more than " + std::to_string(VTICE_PROBES_MAX) +
							   " probe addresses at once (each fn:NAME:return takes one per RET)");
	req.program[req.count] = 0;
	req.addrs[req.count] = address;
	return req.count++;
}

// A watch: point's range, once however many probes name it; its hits
// copy the stack when one of those probes reads kstack.
Result<void> add_watch(vtice_probes &req, const probes::ProbePoint &point, bool copies_stack)
{
	vtice_probe_watch w{};
	w.addr = point.address;
	w.len = point.watch_len;
	w.type = point.watch_access;	// kWatchWrite/kWatchRead are VTICE_PROBE_WATCH_WRITE/READ
	std::uint32_t i = 0;
	while (i < req.nr_watches &&
	       !(req.watch[i].addr == w.addr && req.watch[i].len == w.len && req.watch[i].type == w.type))
		i++;
	if (i == VTICE_PROBE_WATCHES_MAX)
		return probes::error_at(point.pos, "more than " + std::to_string(VTICE_PROBE_WATCHES_MAX) +
							   " watched ranges at once");
	if (i == req.nr_watches)
		req.watch[req.nr_watches++] = w;
	if (copies_stack)
		req.stack_watches |= 1u << i;
	return {};
}

static_assert(probes::kMaxFetchOps == VTICE_FETCH_OPS_MAX && probes::kMaxFetchValues == VTICE_FETCH_VALUES_MAX);
static_assert(static_cast<int>(probes::FetchCode::String) == VTICE_FETCH_STRING &&
	      static_cast<int>(probes::FetchCode::Value) == VTICE_FETCH_VALUE &&
	      static_cast<int>(probes::FetchCode::Load) == VTICE_FETCH_LOAD &&
	      static_cast<int>(probes::FetchCode::Add) == VTICE_FETCH_ADD &&
	      static_cast<int>(probes::FetchCode::Arg) == VTICE_FETCH_ARG &&
	      static_cast<int>(probes::FetchCode::Retval) == VTICE_FETCH_RETVAL &&
	      static_cast<int>(probes::FetchCode::Curtask) == VTICE_FETCH_CURTASK &&
	      static_cast<int>(probes::FetchCode::Reg) == VTICE_FETCH_REG &&
	      static_cast<int>(probes::FetchCode::Index) == VTICE_FETCH_INDEX &&
	      static_cast<int>(probes::FetchCode::Keep) == VTICE_FETCH_KEEP &&
	      static_cast<int>(probes::FetchCode::Count) == VTICE_FETCH_COUNT &&
	      static_cast<int>(probes::FetchCode::Sum) == VTICE_FETCH_SUM &&
	      static_cast<int>(probes::FetchCode::Min) == VTICE_FETCH_MIN &&
	      static_cast<int>(probes::FetchCode::Max) == VTICE_FETCH_MAX &&
	      static_cast<int>(probes::FetchCode::Hist) == VTICE_FETCH_HIST &&
	      static_cast<int>(probes::FetchCode::Keyed) == VTICE_FETCH_KEYED &&
	      static_cast<int>(probes::FetchCode::Lhist) == VTICE_FETCH_LHIST &&
	      static_cast<int>(probes::FetchCode::Key) == VTICE_FETCH_KEY);
static_assert(static_cast<int>(probes::KeyKind::Value) == VTICE_FETCH_KEY_VALUE &&
	      static_cast<int>(probes::KeyKind::Comm) == VTICE_FETCH_KEY_COMM &&
	      static_cast<int>(probes::KeyKind::Pid) == VTICE_FETCH_KEY_PID &&
	      static_cast<int>(probes::KeyKind::Tid) == VTICE_FETCH_KEY_TID &&
	      static_cast<int>(probes::KeyKind::Cpu) == VTICE_FETCH_KEY_CPU);
static_assert(static_cast<int>(probes::IndexWidth::S32) == VTICE_FETCH_INDEX_S32 &&
	      static_cast<int>(probes::IndexWidth::U8) == VTICE_FETCH_INDEX_U8 &&
	      static_cast<int>(probes::KeepCmp::Eq) == VTICE_FETCH_EQ &&
	      static_cast<int>(probes::KeepCmp::Ge) == VTICE_FETCH_GE);
// fetch_compile's root_register: reg()'s first six (the arguments'), RAX,
// then RBX..R15 in the order of the GPRS records.
static_assert(VTICE_FETCH_RDI == 0 && VTICE_FETCH_R9 == 5 && VTICE_FETCH_RAX == 6 && VTICE_FETCH_RBX == 7 &&
	      VTICE_FETCH_RSP == 8 && VTICE_FETCH_RBP == 9 && VTICE_FETCH_R10 == 10 && VTICE_FETCH_R15 == 15);

// A probe's fetch ops without its predicate's tests (the checker puts
// them first, each chain ending in a KEEP): its reads alone.
std::vector<probes::FetchOp> without_root_tests(const std::vector<probes::FetchOp> &ops)
{
	auto last_keep = std::find_if(ops.rbegin(), ops.rend(),
				      [](const probes::FetchOp &op) { return op.code == probes::FetchCode::Keep; });
	return {last_keep.base(), ops.end()};
}

// ops as root takes them, its number + 1 in req (the same program once
// however many probes run it), or 0 when req holds as many as root does.
std::uint8_t add_program(vtice_probes &req, const std::vector<probes::FetchOp> &fetch)
{
	vtice_fetch_op ops[VTICE_FETCH_OPS_MAX] = {};
	for (std::size_t i = 0; i < fetch.size(); i++)
		ops[i] = {static_cast<std::uint8_t>(fetch[i].code), fetch[i].arg, fetch[i].base, fetch[i].imm};
	for (std::uint32_t n = 0; n < req.nr_programs; n++)
		if (std::memcmp(req.fetch[n], ops, sizeof(ops)) == 0)
			return static_cast<std::uint8_t>(n + 1);
	if (req.nr_programs == VTICE_FETCH_PROGRAMS_MAX)
		return 0;
	std::memcpy(req.fetch[req.nr_programs], ops, sizeof(ops));
	return static_cast<std::uint8_t>(++req.nr_programs);
}

// A probe's fetch program's number + 1 in req, or 0 for a probe that
// reads nothing. With root's programs all taken, a probe keeps its reads
// and leaves its predicate to the console (which tests it whole anyway).
Result<std::uint8_t> program_for(vtice_probes &req, const probes::Probe &probe)
{
	if (probe.fetch.empty())
		return std::uint8_t{0};
	if (auto n = add_program(req, probe.fetch))
		return n;
	if (probe.count_in_root)	// recorded instead: the console counts them (RootCountFeed sees 0 here)
		return std::uint8_t{0};
	auto reads = without_root_tests(probe.fetch);
	if (reads.empty())
		return std::uint8_t{0};
	if (auto n = add_program(req, reads))
		return n;
	return probes::error_at(probe.pos, "more than " + std::to_string(VTICE_FETCH_PROGRAMS_MAX) +
						   " probes read through arguments or with str(): root holds that "
						   "many fetch programs");
}

// Whether req's program n + 1 tests a predicate (KEEP): hits it drops are
// gone for every probe at its address.
bool tests_in_root(const vtice_probes &req, std::uint8_t program)
{
	if (!program)
		return false;
	const auto &ops = req.fetch[program - 1];
	return std::any_of(ops, ops + VTICE_FETCH_OPS_MAX,
			   [](const vtice_fetch_op &op) { return op.code == VTICE_FETCH_KEEP; });
}

// A hidden breakpoint at address for point, running fetch (0: none) on its
// hits. Root runs one fetch program per address: two probes there (fn:F
// and addr:F+4 on a kernel with IBT; one address by name and by number)
// must read the same, or one would get the other's values. The stack is
// copied there when one of them reads kstack.
Result<void> add_breakpoint(vtice_probes &req, const probes::ProbePoint &point, std::uint64_t address,
			    std::uint8_t fetch, bool copies_stack)
{
	std::uint32_t used = req.count;
	auto slot = slot_for(req, point, address);
	if (!slot)
		return slot.error();
	bool shared = *slot < used;	// slot_for appends a new address
	std::uint8_t &runs = req.program[*slot];
	if (shared && runs != fetch && (tests_in_root(req, runs) || tests_in_root(req, fetch)))
		return probes::error_at(point.pos, point.text + " is " + dbg::hex(address) +
							   ", where another probe's predicate is tested in root: the hits "
							   "it drops would be gone for both; put them in one probe");
	if (fetch && runs && runs != fetch)
		return probes::error_at(point.pos, point.text + " is " + dbg::hex(address) +
							   ", where another probe reads other memory (str() or fields): "
							   "root runs one set of reads per address; put them in one probe");
	if (fetch)
		runs = fetch;
	if (copies_stack)
		req.stack_points |= std::uint64_t{1} << *slot;
	return {};
}

}  // namespace

namespace {

// Where a hidden breakpoint point is armed: a fn:NAME:return's RETs, else its address.
std::vector<std::uint64_t> breakpoint_addresses(const probes::ProbePoint &point)
{
	if (point.kind == probes::PointKind::FnReturn)
		return point.return_sites;
	if (point.kind == probes::PointKind::FnEntry || point.kind == probes::PointKind::Addr)
		return {point.address};
	return {};
}

// Addresses more than one probe is armed at (fn:F and addr:F+4 on a kernel
// with IBT). A probe counted in root records its hits there instead, for
// the console to count: root's COUNT would take the other probe's hits too.
std::set<std::uint64_t> shared_addresses(const probes::CheckedProgram &program)
{
	std::map<std::uint64_t, const probes::Probe *> first;
	std::set<std::uint64_t> shared;
	for (const auto &probe : program.program.probes)
		for (const auto &point : probe.points)
			for (std::uint64_t address : breakpoint_addresses(point))
				if (auto [at, fresh] = first.emplace(address, &probe); !fresh && at->second != &probe)
					shared.insert(address);
	return shared;
}

}  // namespace

Result<vtice_probes> arm_request(const probes::CheckedProgram &program, std::uint32_t stack_bytes)
{
	auto req = request<vtice_probes>();
	req.op = VTICE_PROBES_ARM;
	req.stack_bytes = stack_bytes;
	req.flags = program.more_regs ? VTICE_PROBES_MORE_REGS : 0;
	req.pid = program.root_filter.pid;
	std::memcpy(req.comm, program.root_filter.comm.data(),
		    std::min(program.root_filter.comm.size(), sizeof(req.comm) - 1));
	std::set<std::uint64_t> shared = shared_addresses(program);
	for (const auto &probe : program.program.probes) {
		auto fetch = program_for(req, probe);
		if (!fetch)
			return fetch.error();
		for (const auto &point : probe.points) {
			if (point.kind == probes::PointKind::Watch) {
				if (auto ok = add_watch(req, point, probe.copies_kstack); !ok)
					return ok.error();
				continue;
			}
			for (std::uint64_t address : breakpoint_addresses(point)) {
				std::uint8_t runs = probe.count_in_root && shared.count(address) ? 0 : *fetch;
				if (auto ok = add_breakpoint(req, point, address, runs, probe.copies_kstack); !ok)
					return ok.error();
			}
		}
	}
	return req;
}

Result<std::uint32_t> FunctionProbes::arm(vtice_probes &req)
{
	if (ioctl(dev_.get(), VTICE_IOC_PROBES, &req) < 0) {
		int err = errno;
		if (err == EBUSY)
			return make_error("another 'vtice probe' owns the function probes (here, or through the debug "
					  "stub: probe in vtice attach), or a watch: range shares a page with a hidden "
					  "breakpoint (a page is watched or split, not both)");
		if (err == EOPNOTSUPP)
			return make_error(path_ + ": this CPU cannot hide breakpoints (no execute-only EPT): fn: probes "
						  "need it");
		if (err == EINVAL)
			return make_error(path_ + ": the module refused a probe address (dmesg names it): only the "
						  "kernel's own text, at an instruction's start; a watch: only mapped "
						  "kernel memory");
		if (err == EACCES)
			return make_error(path_ + ": a watch: range is in the hypervisor's own memory, which it hides");
		return ioctl_error(path_, "VTICE_IOC_PROBES", err);
	}
	return req.armed;
}

// QUERY or DISARM: the hits recorded since load, what root counted.
Result<vtice_probes> FunctionProbes::ask(std::uint32_t op)
{
	auto req = request<vtice_probes>();
	req.op = op;
	if (ioctl(dev_.get(), VTICE_IOC_PROBES, &req) < 0)
		return ioctl_error(path_, "VTICE_IOC_PROBES", errno);
	return req;
}

Result<vtice_probes> FunctionProbes::query() { return ask(VTICE_PROBES_QUERY); }

Result<vtice_probes> FunctionProbes::disarm() { return ask(VTICE_PROBES_DISARM); }

Result<std::vector<vtice_probe_key>> FunctionProbes::keys(std::uint32_t index)
{
	auto req = request<vtice_probe_keys>();
	req.index = index;
	if (auto ok = per_address_ioctl(VTICE_IOC_PROBE_KEYS, "VTICE_IOC_PROBE_KEYS", &req); !ok)
		return ok.error();
	return std::vector<vtice_probe_key>(req.slots, req.slots + VTICE_FETCH_KEYED_SLOTS);
}

Result<std::vector<std::uint64_t>> FunctionProbes::hist(std::uint32_t index)
{
	auto req = request<vtice_probe_hist>();
	req.index = index;
	if (auto ok = per_address_ioctl(VTICE_IOC_PROBE_HIST, "VTICE_IOC_PROBE_HIST", &req); !ok)
		return ok.error();
	return std::vector<std::uint64_t>(req.buckets, req.buckets + VTICE_FETCH_HIST_BUCKETS);
}

// A read of one armed address's counts (VTICE_IOC_PROBE_HIST, _KEYS) into req.
Result<void> FunctionProbes::per_address_ioctl(unsigned long cmd, const char *name, void *req)
{
	if (ioctl(dev_.get(), cmd, req) == 0)
		return {};
	if (errno == ENOTTY)
		return make_error(path_ + ": the module has no " + name + ": it is older than this console");
	return ioctl_error(path_, name, errno);
}

}  // namespace vtice::console
