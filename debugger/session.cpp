// Session: state, symbols, registers, memory, breakpoints, expressions.
// Run control is in session_run.cpp, unwinding in session_stack.cpp.
#include "hex.hpp"
#include "session.hpp"

#include "btf/btf_source.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "pagewalk.hpp"

namespace vtice::dbg {

namespace {

bool all_hex(std::string_view text)
{
	return !text.empty() && std::all_of(text.begin(), text.end(),
					    [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

Session::Session(std::unique_ptr<Target> target)
	: target_(std::move(target)), disassembler_(std::make_unique<Disassembler>()),
	  kernel_types_(std::make_unique<btf::KernelTypes>())
{
}

Session::~Session() = default;

void Session::set_symbols(std::unique_ptr<SymbolSource> symbols)
{
	symbols_ = std::move(symbols);
}

Symbolizer Session::symbolizer() const
{
	Symbolizer own = make_symbolizer(symbols_.get());
	if (!modules_)
		return own;
	return [own, modules = modules_](std::uint64_t address) {
		auto hit = own ? own(address) : std::nullopt;
		return hit ? hit : modules->symbolize(address);
	};
}

void Session::set_unwinder(std::unique_ptr<Unwinder> unwinder)
{
	unwinder_ = std::move(unwinder);
}

void Session::on_stop(std::function<void(const StopInfo &)> listener)
{
	listeners_.push_back(std::move(listener));
}

void Session::announce(const StopInfo &stop)
{
	for (auto &listener : listeners_)
		listener(stop);
}

void Session::announce(const Result<StopInfo> &stop)
{
	if (stop)
		announce(*stop);
}

bool Session::is_kernel_text(std::uint64_t address) const
{
	if (symbols_) {
		auto start = symbols_->lookup("_stext");
		auto end = symbols_->lookup("_etext");
		if (start && end)
			return address >= *start && address < *end;
	}
	// Without symbols: the kernel image mapping (SDM-independent, Linux's
	// x86-64 memory map: __START_KERNEL_map + up to 1 GiB).
	return address >= 0xffffffff80000000ull && address < 0xffffffffc0000000ull;
}

// --- registers ----------------------------------------------------------

void Session::invalidate_registers()
{
	registers_valid_ = false;
}

Result<RegisterValues> &Session::cached_registers()
{
	if (!registers_valid_) {
		registers_ = target_->read_registers();
		registers_valid_ = registers_.ok();
	}
	return registers_;
}

Result<std::uint64_t> Session::register_value(std::string_view name)
{
	const RegisterInfo *reg = target_->layout().find(std::string(name));
	if (!reg && name == "pc")
		reg = target_->layout().find("rip");
	if (!reg && name == "sp")
		reg = target_->layout().find("rsp");
	if (!reg)
		return make_error("no register named '" + std::string(name) + "'");
	auto &regs = cached_registers();
	if (!regs)
		return regs.error();
	auto value = regs->get(*reg);
	if (!value)
		return make_error("register '" + std::string(name) + "' is not in the register block");
	return *value;
}

Result<std::uint64_t> Session::pc()
{
	return register_value("rip");
}

Result<void> Session::set_register(std::string_view name, std::uint64_t value)
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is running");
	const RegisterInfo *reg = target_->layout().find(std::string(name));
	if (!reg)
		return make_error("no register named '" + std::string(name) + "'");
	if (auto r = target_->write_register(*reg, value); !r)
		return r;
	invalidate_registers();
	return {};
}

Result<std::vector<RegisterView>> Session::registers()
{
	auto &regs = cached_registers();
	if (!regs)
		return regs.error();
	std::vector<RegisterView> out;
	for (const auto &reg : target_->layout().registers) {
		if (reg.bits > 64)
			continue;  // x87 and vector registers: "info all-registers" territory
		auto value = regs->get(reg);
		if (!value)
			continue;
		auto before = previous_registers_.get(reg);
		out.push_back({&reg, *value, before && *before != *value});
	}
	return out;
}

// --- memory ---------------------------------------------------------------

symbols::MemoryReader Session::memory_reader()
{
	return [this](std::uint64_t address, std::span<std::uint8_t> out) {
		auto bytes = read_memory(address, out.size());
		if (!bytes || bytes->size() != out.size())
			return false;
		std::copy(bytes->begin(), bytes->end(), out.begin());
		return true;
	};
}

Result<std::vector<std::uint8_t>> Session::read_memory(std::uint64_t address, std::size_t length)
{
	if (overlay_) {
		if (auto known = overlay_->read(address, length))
			return std::move(*known);
	}
	auto direct = target_->read_memory(address, length);
	if (direct && tap_)
		tap_(address, *direct);
	if (direct || !target_->features().physical_memory)
		return direct;
	auto walked = read_via_page_walk(address, length);
	if (!walked)
		return make_error(direct.error().message + "; page walk: " + walked.error().message);
	return walked;
}

// CR4.LA57 (bit 12) of the stopped CPU; nothing when the stub shows no CR4.
std::optional<bool> Session::five_level_paging()
{
	auto cr4 = register_value("cr4");
	if (!cr4)
		return std::nullopt;
	return (*cr4 & (1ull << 12)) != 0;
}

Result<std::uint64_t> Session::translate(std::uint64_t address)
{
	auto cr3 = register_value("cr3");
	if (!cr3)
		return cr3.error();
	bool la57 = five_level_paging().value_or(false);
	if (auto r = target_->set_physical_mode(true); !r)
		return r.error();
	auto t = translate_address(*cr3, address, [this](std::uint64_t pa) -> Result<std::uint64_t> {
		auto bytes = target_->read_memory(pa, 8);
		if (!bytes)
			return bytes.error();
		std::uint64_t v;
		std::memcpy(&v, bytes->data(), 8);
		return v;
	}, la57);
	(void)target_->set_physical_mode(false);
	if (!t)
		return t.error();
	return t->physical;
}

Result<std::vector<std::uint8_t>> Session::read_via_page_walk(std::uint64_t address, std::size_t length)
{
	std::vector<std::uint8_t> out;
	while (out.size() < length) {
		std::uint64_t va = address + out.size();
		auto pa = translate(va);
		if (!pa)
			return pa.error();
		std::size_t in_page = std::min<std::size_t>(length - out.size(), 4096 - (va & 4095));
		if (auto r = target_->set_physical_mode(true); !r)
			return r.error();
		auto bytes = target_->read_memory(*pa, in_page);
		(void)target_->set_physical_mode(false);
		if (!bytes)
			return bytes.error();
		out.insert(out.end(), bytes->begin(), bytes->end());
	}
	return out;
}

Result<void> Session::write_memory(std::uint64_t address, const std::vector<std::uint8_t> &bytes)
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is running");
	return target_->write_memory(address, bytes);
}

Result<std::vector<Instruction>> Session::disassemble(std::uint64_t address, std::size_t count)
{
	std::vector<Instruction> out;
	auto bytes = read_memory(address, count * 15);
	if (!bytes) {
		// Near the end of a mapping: fall back to a smaller window.
		bytes = read_memory(address, std::min<std::size_t>(count * 15, 4096 - (address & 4095)));
		if (!bytes)
			return bytes.error();
	}
	std::size_t offset = 0;
	while (out.size() < count && offset < bytes->size()) {
		auto insn = disassembler_->decode(std::span(bytes->data() + offset, bytes->size() - offset),
						  address + offset);
		if (!insn) {
			if (out.empty())
				return make_error("cannot decode at " + hex(address + offset) + ": " + insn.error().message);
			break;
		}
		offset += insn->length;
		out.push_back(std::move(*insn));
	}
	return out;
}

// --- expressions and locations -----------------------------------------

ExprContext Session::expr_context()
{
	ExprContext ctx;
	ctx.reg = [this](std::string_view name) { return register_value(name); };
	ctx.mem = [this](std::uint64_t address, unsigned size) -> Result<std::uint64_t> {
		auto bytes = read_memory(address, size);
		if (!bytes)
			return bytes.error();
		std::uint64_t v = 0;
		std::memcpy(&v, bytes->data(), size);
		return v;
	};
	ctx.sym = [this](std::string_view name) -> std::optional<std::uint64_t> {
		auto own = symbols_ ? symbols_->lookup(name) : std::nullopt;
		return own || !modules_ ? own : modules_->lookup(name);
	};
	return ctx;
}

Result<std::uint64_t> Session::evaluate(std::string_view expression)
{
	return evaluate_expression(expression, expr_context());
}

// "NAME#N": the Nth of the symbols named NAME (break reports them all).
std::optional<Result<std::uint64_t>> Session::pick_copy(std::string_view text) const
{
	auto hash = text.rfind('#');
	if (!symbols_ || hash == std::string_view::npos || hash + 1 == text.size())
		return std::nullopt;
	std::string_view name = text.substr(0, hash), index = text.substr(hash + 1);
	if (!std::all_of(index.begin(), index.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
		return std::nullopt;
	auto all = symbols_->lookup_all(name);
	if (all.empty())
		return std::nullopt;
	std::size_t n = index.size() > 6 ? 0 : std::stoul(std::string(index));
	if (n < 1 || n > all.size())
		return Result<std::uint64_t>(make_error("'" + std::string(name) + "' names " + std::to_string(all.size()) +
							" symbols: pick #1 to #" + std::to_string(all.size())));
	return Result<std::uint64_t>(all[n - 1]);
}

Result<std::uint64_t> Session::resolve_location(std::string_view text)
{
	if (!text.empty() && text[0] == '*')
		text.remove_prefix(1);  // gdb's "break *ADDRESS"
	// WinDbg users type bare hex ("ffffffff81364630"); a symbol of that name wins.
	if (all_hex(text) && text.size() >= 8 && !(symbols_ && symbols_->lookup(text))) {
		std::uint64_t v = 0;
		for (char c : text)
			v = v << 4 | static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
		return v;
	}
	if (auto pick = pick_copy(text))
		return *pick;
	auto value = evaluate(text);
	if (!value && !symbols_)
		return make_error(value.error().message + " (no symbols loaded: use --symbols, or an address)");
	return value;
}

// --- breakpoints -----------------------------------------------------------

Breakpoint *Session::breakpoint_at(std::uint64_t address)
{
	for (auto &bp : breakpoints_)
		if (bp.enabled && bp.inserted && bp.address == address &&
		    (bp.spec.type == BreakKind::Software || bp.spec.type == BreakKind::Hardware))
			return &bp;
	return nullptr;
}

Result<void> Session::insert(Breakpoint &bp)
{
	if (bp.inserted || !bp.enabled)
		return {};
	unsigned kind = bp.spec.type == BreakKind::Software || bp.spec.type == BreakKind::Hardware ? 1 : bp.spec.length;
	if (auto r = target_->insert_breakpoint(bp.spec.type, bp.address, kind); !r)
		return r;
	bp.inserted = true;
	return {};
}

Result<Breakpoint *> Session::find_breakpoint(int id)
{
	for (auto &bp : breakpoints_)
		if (bp.id == id)
			return &bp;
	return make_error("no breakpoint number " + std::to_string(id));
}

// Checks the syntax, registers and symbols of a condition now so a typo is
// reported at once, not at the first hit: registers and memory read as 1 here.
Result<void> Session::check_condition(const std::string &condition)
{
	if (condition.empty())
		return {};
	ExprContext check = expr_context();
	const RegisterLayout &layout = target_->layout();
	check.reg = [&layout](std::string_view name) -> Result<std::uint64_t> {
		if (!layout.find(std::string(name)) && name != "pc" && name != "sp")
			return make_error("no register named '" + std::string(name) + "'");
		return 1;
	};
	check.mem = [](std::uint64_t, unsigned) -> Result<std::uint64_t> { return 1; };
	if (auto r = evaluate_expression(condition, check); !r)
		return make_error("bad condition '" + condition + "': " + r.error().to_string());
	return {};
}

Result<int> Session::add_breakpoint(const BreakpointSpec &spec)
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is running; interrupt it first");
	auto address = resolve_location(spec.location);
	if (!address)
		return address.error();
	// The CPU cannot execute or access such an address: a typo, not a place.
	// Without CR4 (kgdb) the wider 5-level rule is the one applied.
	bool la57 = five_level_paging().value_or(true);
	if (!canonical(*address, la57))
		return make_error(hex(*address) + " is not a canonical address (bits 63.." + (la57 ? "56" : "47") +
				  " must be equal); no breakpoint set");
	if (auto r = check_condition(spec.condition); !r)
		return r.error();
	Breakpoint bp;
	bp.id = next_breakpoint_id_;
	bp.spec = spec;
	bp.address = *address;
	if (auto r = insert(bp); !r)
		return r.error();
	next_breakpoint_id_++;
	breakpoints_.push_back(bp);
	return bp.id;
}

Result<void> Session::delete_breakpoint(int id)
{
	auto it = std::find_if(breakpoints_.begin(), breakpoints_.end(), [id](const Breakpoint &b) { return b.id == id; });
	if (it == breakpoints_.end())
		return make_error("no breakpoint number " + std::to_string(id));
	if (it->inserted) {
		unsigned kind = it->spec.type <= BreakKind::Hardware ? 1 : it->spec.length;
		if (auto r = target_->remove_breakpoint(it->spec.type, it->address, kind); !r)
			return r;
	}
	breakpoints_.erase(it);
	return {};
}

Result<void> Session::enable_breakpoint(int id, bool enabled)
{
	for (auto &bp : breakpoints_) {
		if (bp.id != id)
			continue;
		if (enabled == bp.enabled)
			return {};
		if (!enabled && bp.inserted) {
			unsigned kind = bp.spec.type <= BreakKind::Hardware ? 1 : bp.spec.length;
			if (auto r = target_->remove_breakpoint(bp.spec.type, bp.address, kind); !r)
				return r;
			bp.inserted = false;
		}
		bp.enabled = enabled;
		return enabled ? insert(bp) : Result<void>();
	}
	return make_error("no breakpoint number " + std::to_string(id));
}

Result<void> Session::set_condition(int id, const std::string &condition)
{
	auto bp = find_breakpoint(id);
	if (!bp)
		return bp.error();
	if (auto r = check_condition(condition); !r)
		return r;
	(*bp)->spec.condition = condition;
	return {};
}

Result<void> Session::set_ignore_count(int id, unsigned count)
{
	auto bp = find_breakpoint(id);
	if (!bp)
		return bp.error();
	(*bp)->ignore_count = count;
	return {};
}

Result<void> Session::set_commands(int id, std::vector<std::string> commands)
{
	auto bp = find_breakpoint(id);
	if (!bp)
		return bp.error();
	(*bp)->commands = std::move(commands);
	return {};
}

std::optional<int> Session::last_created_breakpoint() const
{
	if (next_breakpoint_id_ == 1)
		return std::nullopt;
	return next_breakpoint_id_ - 1;
}

}  // namespace vtice::dbg
