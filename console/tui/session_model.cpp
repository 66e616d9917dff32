#include "session_model.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>


namespace vtice::tui {
namespace {

// The registers a kernel debugger reads first: gdb's order, except that rip
// and eflags follow rsp so they stay on screen when the grid is cut short.
// The rest of target.xml (x87, SSE, AVX) stays out of the grid.
constexpr const char *kShownRegisters[] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "rip", "eflags", "r8", "r9",
	"r10", "r11", "r12", "r13", "r14", "r15", "cs", "ss", "ds", "es", "fs", "gs",
	"fs_base", "gs_base", "cr0", "cr2", "cr3", "cr4",
};

// How far back from a symbol start we decode to find the instructions above
// an address; beyond this we show none rather than guess at boundaries.
constexpr std::uint64_t kMaxBackDecode = 0x4000;

std::string format_value(std::uint64_t value, unsigned bits)
{
	char text[24];
	int digits = bits >= 64 ? 16 : bits >= 32 ? 8 : 4;
	std::snprintf(text, sizeof(text), "%0*llx", digits, static_cast<unsigned long long>(value));
	return text;
}

// Short labels for the narrow breakpoints pane (gdb's "hw watchpoint" etc.).
const char *kind_label(dbg::BreakKind kind)
{
	switch (kind) {
	case dbg::BreakKind::Software: return "sw";
	case dbg::BreakKind::Hardware: return "hw";
	case dbg::BreakKind::WriteWatch: return "watch";
	case dbg::BreakKind::ReadWatch: return "rwatc";
	case dbg::BreakKind::AccessWatch: return "awatc";
	}
	return "?";
}

}  // namespace

SessionModel::SessionModel(dbg::Session &session, const dbg::StopInfo &initial)
	: session_(session), symbolize_(session.symbolizer())
{
	reason_ = initial.describe(symbolize_);
	pc_ = initial.pc;
	std::weak_ptr<StopBox> box = stops_;
	session_.on_stop([box](const dbg::StopInfo &info) {
		if (auto alive = box.lock()) {
			std::lock_guard<std::mutex> lock(alive->mutex);
			++alive->count;
			alive->last = info;
		}
	});
}

SessionModel::~SessionModel()
{
	// Never leave a worker blocked inside the Session: stop the target and
	// wait for the job so the Session is free for detach.
	if (busy()) {
		(void)session_.target().interrupt();
		job_.wait();
	}
}

std::string SessionModel::target_name() const
{
	return session_.target().describe();
}

bool SessionModel::runs_backwards() const
{
	return session_.target().features().reverse;
}

// serve-replay's `monitor position` says "step S of N, instruction I"; a
// target that runs backwards some other way says nothing we follow.
std::optional<std::uint64_t> SessionModel::replay_instruction()
{
	if (busy() || !runs_backwards())
		return std::nullopt;
	if (replay_asked_ == generation_)
		return replay_instruction_;
	replay_asked_ = generation_;
	replay_instruction_.reset();
	auto said = session_.target().monitor("position");
	static constexpr std::string_view kWord = "instruction ";
	std::size_t at = said ? said->find(kWord) : std::string::npos;
	if (at != std::string::npos) {
		const char *digits = said->c_str() + at + kWord.size();
		char *end = nullptr;
		unsigned long long value = std::strtoull(digits, &end, 10);
		if (end != digits)
			replay_instruction_ = value;
	}
	return replay_instruction_;
}

std::vector<RegisterRow> SessionModel::registers()
{
	std::vector<RegisterRow> rows;
	if (busy())
		return rows;
	auto all = session_.registers();
	if (!all)
		return rows;
	for (const char *name : kShownRegisters) {
		auto it = std::find_if(all->begin(), all->end(),
				       [&](const dbg::RegisterView &reg) { return reg.info && reg.info->name == name; });
		if (it != all->end())
			rows.push_back({name, format_value(it->value, it->info->bits), it->changed});
	}
	return rows;
}

std::optional<std::uint64_t> SessionModel::pc()
{
	if (busy())
		return std::nullopt;
	auto value = session_.pc();
	if (value)
		pc_ = *value;
	return value ? std::optional<std::uint64_t>(*value) : std::nullopt;
}

bool SessionModel::breakpoint_at(std::uint64_t address) const
{
	for (const auto &bp : session_.breakpoints())
		if (bp.address == address && bp.enabled &&
		    (bp.spec.type == dbg::BreakKind::Software || bp.spec.type == dbg::BreakKind::Hardware))
			return true;
	return false;
}

std::vector<DisasmRow> SessionModel::decode_from(std::uint64_t address, int count)
{
	std::vector<DisasmRow> rows;
	if (count <= 0)
		return rows;
	auto insns = session_.disassemble(address, static_cast<std::size_t>(count));
	if (!insns) {
		rows.push_back({address, format_address(address, symbolize_), "",
				"(" + insns.error().to_string() + ")", false, pc_ == address});
		return rows;
	}
	for (const auto &insn : *insns) {
		std::string bytes;
		for (unsigned i = 0; i < insn.length; ++i) {
			char hex_byte[4];
			std::snprintf(hex_byte, sizeof(hex_byte), i ? " %02x" : "%02x", insn.bytes[i]);
			bytes += hex_byte;
		}
		rows.push_back({insn.address, format_address(insn.address, symbolize_), bytes,
				session_.disassembler().format(insn, symbolize_), breakpoint_at(insn.address),
				pc_ && *pc_ == insn.address});
	}
	return rows;
}

// x86 cannot be decoded backwards; decode forward from the enclosing
// symbol's start and keep the instructions that end exactly at address.
std::vector<DisasmRow> SessionModel::decode_before(std::uint64_t address, int count)
{
	if (count <= 0 || !symbolize_)
		return {};
	auto hit = symbolize_(address);
	if (!hit || hit->offset == 0 || hit->offset > kMaxBackDecode)
		return {};
	std::vector<std::uint64_t> starts;
	std::uint64_t at = hit->start;
	while (at < address) {
		auto insns = session_.disassemble(at, 64);
		if (!insns || insns->empty())
			return {};
		std::uint64_t before = at;
		for (const auto &insn : *insns) {
			if (insn.address >= address)
				break;
			starts.push_back(insn.address);
			at = insn.next();
		}
		if (at == before)
			break;
	}
	if (at != address || starts.empty())
		return {};  // the decode did not land on address: no trustworthy rows above it
	std::size_t keep = std::min(starts.size(), static_cast<std::size_t>(count));
	return decode_from(starts[starts.size() - keep], static_cast<int>(keep));
}

std::vector<DisasmRow> SessionModel::disassemble(std::uint64_t address, int before, int after)
{
	if (busy())
		return {};
	auto rows = decode_before(address, before);
	auto rest = decode_from(address, after);
	rows.insert(rows.end(), rest.begin(), rest.end());
	return rows;
}

std::vector<FrameRow> SessionModel::backtrace(int max_frames)
{
	std::vector<FrameRow> rows;
	if (busy())
		return rows;
	auto frames = session_.backtrace(static_cast<std::size_t>(std::max(max_frames, 1)));
	if (!frames)
		return rows;
	int level = 0;
	for (const auto &frame : *frames) {
		std::string where = (frame.reliable ? "" : "? ") + format_address(frame.pc, symbolize_);
		// ORC frames are the norm; say only how the unusual ones were found.
		if (!frame.note.empty() && frame.note != "orc")
			where += "  [" + frame.note + "]";
		rows.push_back({level++, frame.pc, where});
	}
	return rows;
}

Result<std::vector<std::uint8_t>> SessionModel::read_memory(std::uint64_t address, std::size_t length)
{
	if (busy())
		return make_error("the target is running");
	return session_.read_memory(address, length);
}

std::vector<BreakpointRow> SessionModel::breakpoints()
{
	std::vector<BreakpointRow> rows;
	if (busy())
		return rows;
	for (const auto &bp : session_.breakpoints())
		rows.push_back({bp.id, bp.address, bp.spec.location, kind_label(bp.spec.type),
				bp.enabled, bp.hits});
	return rows;
}

std::optional<std::uint64_t> SessionModel::default_memory_address()
{
	if (busy())
		return std::nullopt;
	auto rsp = session_.register_value("rsp");
	return rsp ? std::optional<std::uint64_t>(*rsp) : std::nullopt;
}

Result<std::uint64_t> SessionModel::evaluate(const std::string &expression)
{
	if (busy())
		return make_error("the target is running");
	return session_.evaluate(expression);
}

Result<void> SessionModel::toggle_breakpoint(std::uint64_t address)
{
	if (busy())
		return make_error("the target is running");
	for (const auto &bp : session_.breakpoints())
		if (bp.address == address &&
		    (bp.spec.type == dbg::BreakKind::Software || bp.spec.type == dbg::BreakKind::Hardware))
			return session_.delete_breakpoint(bp.id);
	dbg::BreakpointSpec spec;
	spec.location = hex(address);
	auto id = session_.add_breakpoint(spec);
	if (!id)
		return id.error();
	return {};
}

}  // namespace vtice::tui
