#include "replay_shell.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <sstream>

#include "args.hpp"
#include "rsp/packet.hpp"

namespace vtice::console {

namespace {

std::vector<std::string> split_words(const std::string &line)
{
	std::istringstream in(line);
	std::vector<std::string> words;
	for (std::string w; in >> w;)
		words.push_back(w);
	return words;
}

// A decimal count, bounded; nothing for anything else.
std::optional<std::uint64_t> count_of(const std::string &text)
{
	if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos)
		return std::nullopt;
	return std::stoull(text);
}

// How accesses names a recorded access's kind.
const char *access_name(const replay::MemoryEvent &event)
{
	switch (event.kind) {
	case replay::AccessKind::Read: return "read";
	case replay::AccessKind::Write: return "write";
	case replay::AccessKind::WriteUnknownOld: return "write";
	case replay::AccessKind::ReadWrite: return "both";
	case replay::AccessKind::Unseen: return event.maybe ? "maybe" : "unseen";
	case replay::AccessKind::Seen: return "seen";
	}
	return "?";
}

const char kShellHelp[] =
	"  stepi [N], si          forward N instructions (a REP iteration is one)\n"
	"  reverse-stepi [N], rsi back N instructions\n"
	"  nexti, ni / reverse-nexti, rni   one instruction, calls run through\n"
	"  finish / reverse-finish   to the caller / back to the call that entered this function\n"
	"  goto N | FUNC[+OFF] | ADDR    step N, or the next time pc is there (from the start)\n"
	"  registers [R...], regs  the registers at this step\n"
	"  x ADDR [LEN]           memory as it was at this step (?? = the recording never saw it)\n"
	"  bt                     the calls that enclose this step (ORC with --symbols)\n"
	"  last-write ADDR [LEN]  the step that last wrote any of those bytes before here\n"
	"  writes ADDR [LEN]      every step that wrote them, with old and new bytes (a watch over the whole path)\n"
	"  accesses               the memory this step's instruction reads and writes, with the bytes\n"
	"  when REG==VALUE / reverse-when REG==VALUE   the next / previous step where REG becomes VALUE\n"
	"  where, info, help, quit\n";

}  // namespace

ReplayShell::ReplayShell(replay::ReplayFile &file, std::FILE *out)
	: file_(file), replay_(*file.replay), navigator_(*file.replay, disassembler_),
	  symbols_(file.data.symbols), out_(out)
{
}

bool ReplayShell::fail(const std::string &message)
{
	std::fprintf(out_, "error: %s\n", message.c_str());
	return false;
}

std::string ReplayShell::where_text(std::size_t position) const
{
	std::uint64_t pc = replay_.pc_at(position);
	std::string text = "step " + std::to_string(position) + " of " + std::to_string(replay_.steps()) + "  " +
			   format_address(pc, symbols_.symbolizer());
	if (auto insn = navigator_.instruction(position))
		text += ":  " + disassembler_.format(*insn, symbols_.symbolizer());
	return text;
}

void ReplayShell::print_where()
{
	std::fprintf(out_, "%s\n", where_text(replay_.position()).c_str());
}

void ReplayShell::print_summary()
{
	std::uint64_t bytes = 0;
	for (const auto &step : replay_.recording().steps)
		bytes += replay::encoded_size(step);
	std::fprintf(out_, "recording: %zu steps, %zu registers, %zu bytes of memory at step 0, %" PRIu64
			   " bytes of steps (%.1f per step)\n",
		     replay_.steps(), replay_.recording().registers.size(),
		     replay_.recording().memory.empty() ? 0 : replay_.recording().memory.front().bytes.size(), bytes,
		     replay_.steps() ? static_cast<double>(bytes) / replay_.steps() : 0.0);
	std::fprintf(out_, "from %s\n  to %s\n", where_text(0).c_str(), where_text(replay_.steps()).c_str());
}

std::optional<std::uint64_t> ReplayShell::address_of(const std::string &text) const
{
	std::string name = text, offset;
	if (auto plus = text.find('+'); plus != std::string::npos) {
		name = text.substr(0, plus);
		offset = text.substr(plus + 1);
	}
	std::uint64_t add = 0;
	if (!offset.empty()) {
		auto v = parse_hex(offset);
		if (!v)
			return std::nullopt;
		add = static_cast<std::uint64_t>(*v);
	}
	if (!name.empty() && name[0] == '$') {
		auto value = replay_.reg(name.substr(1));
		if (!value)
			return std::nullopt;
		return *value + add;
	}
	for (const auto &symbol : file_.data.symbols)
		if (symbol.name == name)
			return symbol.address + add;
	auto v = parse_hex(text);
	if (!v)
		return std::nullopt;
	return static_cast<std::uint64_t>(*v);
}

bool ReplayShell::move(const std::vector<std::string> &words)
{
	const std::string &verb = words[0];
	std::uint64_t n = 1;
	if (words.size() > 1) {
		auto c = count_of(words[1]);
		if (!c)
			return fail(verb + ": a count, not '" + words[1] + "'");
		n = *c;
	}
	std::size_t at = replay_.position();
	for (std::uint64_t i = 0; i < n; i++) {
		std::size_t was = at;
		if (verb == "stepi" || verb == "si")
			at = std::min(at + 1, replay_.steps());
		else if (verb == "reverse-stepi" || verb == "rsi")
			at = at ? at - 1 : 0;
		else if (verb == "nexti" || verb == "ni")
			at = navigator_.next(at);
		else if (verb == "reverse-nexti" || verb == "rni")
			at = navigator_.reverse_next(at);
		else if (verb == "finish")
			at = navigator_.finish(at);
		else
			at = navigator_.reverse_finish(at);
		if (at == was)
			break;  // an end of the recording: a huge count stops there
	}
	replay_.seek(at);
	if (at == replay_.steps() || at == 0)
		std::fprintf(out_, "(%s of the recording)\n", at == 0 ? "start" : "end");
	print_where();
	return true;
}

bool ReplayShell::go_to(const std::string &where)
{
	if (auto n = count_of(where)) {
		if (*n > replay_.steps())
			return fail("goto: the recording has steps 0 to " + std::to_string(replay_.steps()));
		replay_.seek(*n);
		print_where();
		return true;
	}
	auto address = address_of(where);
	if (!address)
		return fail("goto: '" + where + "' is neither a step number, a function of the recording nor an address");
	std::optional<std::size_t> found = replay_.pc_at(0) == *address ? std::optional<std::size_t>(0)
									  : navigator_.find_pc(*address, 0, true);
	if (!found)
		return fail("goto: the recording never runs " + format_address(*address, symbols_.symbolizer()));
	replay_.seek(*found);
	print_where();
	return true;
}

bool ReplayShell::registers(const std::vector<std::string> &names)
{
	const auto &specs = replay_.recording().registers;
	for (std::size_t i = 0; i < specs.size(); i++) {
		bool wanted = names.empty() ? specs[i].group.empty() || specs[i].group == "general"
					    : std::find(names.begin(), names.end(), specs[i].name) != names.end();
		if (!wanted || specs[i].bits > 64)
			continue;
		std::fprintf(out_, "%-8s 0x%016" PRIx64 "\n", specs[i].name.c_str(), *replay_.reg(specs[i].name));
	}
	for (const std::string &name : names)
		if (replay_.register_index(name) < 0)
			return fail("no register '" + name + "' in the recording");
	return true;
}

bool ReplayShell::examine(const std::vector<std::string> &words)
{
	if (words.size() < 2)
		return fail("x ADDR [LEN]");
	if (words[1][0] == '$' && replay_.register_index(words[1].substr(1, words[1].find('+') - 1)) < 0)
		return fail("no register '" + words[1].substr(1) + "' in the recording");
	auto address = address_of(words[1]);
	auto length = words.size() > 2 ? count_of(words[2]) : std::optional<std::uint64_t>(16);
	if (!address || !length || *length == 0 || *length > 4096)
		return fail("x ADDR [LEN]: an address and a length of 1 to 4096 bytes");
	for (std::uint64_t row = 0; row < *length; row += 16) {
		std::fprintf(out_, "0x%016" PRIx64 ":", *address + row);
		for (std::uint64_t i = row; i < std::min<std::uint64_t>(row + 16, *length); i++) {
			auto byte = replay_.read(*address + i, 1);
			if (byte.empty())
				std::fprintf(out_, " ??");
			else
				std::fprintf(out_, " %02x", byte[0]);
		}
		std::fprintf(out_, "\n");
	}
	return true;
}

// Which recorded call a frame returns to: the call instruction just before
// its return address. Once every recorded call has had its frame, the
// frames further out were called before the recording began.
std::string ReplayShell::call_note(std::uint64_t return_address, const std::vector<std::size_t> &calls,
				   std::size_t &matched) const
{
	constexpr std::uint64_t kLongestInstruction = 15;
	for (std::size_t call : calls) {
		std::uint64_t pc = replay_.pc_at(call);
		if (return_address > pc && return_address - pc <= kLongestInstruction) {
			++matched;
			return "  (the call at step " + std::to_string(call) + ")";
		}
	}
	return matched == calls.size() ? "  (called before the recording)" : "";
}

bool ReplayShell::orc_backtrace()
{
	constexpr std::size_t kMaxFrames = 64;
	auto frames = unwind_replay(*orc_, replay_, kMaxFrames);
	if (!frames)
		return fail("bt: " + frames.error().message);
	std::vector<std::size_t> calls = navigator_.call_stack(replay_.position());
	std::size_t matched = 0;
	for (std::size_t i = 0; i < frames->size(); i++) {
		const dbg::Frame &frame = (*frames)[i];
		std::string note = i == 0 ? "" : call_note(frame.pc, calls, matched);
		if (frame.note.find("unwind stopped") != std::string::npos)
			note += "  (" + frame.note.substr(frame.note.find("unwind stopped"));
		std::fprintf(out_, "#%zu  0x%016" PRIx64 " in %s%s\n", i, frame.pc,
			     format_address(frame.pc, orc_->symbolizer).c_str(), note.c_str());
	}
	return true;
}

bool ReplayShell::backtrace()
{
	if (orc_)
		return orc_backtrace();
	std::size_t at = replay_.position();
	std::fprintf(out_, "#0  %s\n", format_address(replay_.pc_at(at), symbols_.symbolizer()).c_str());
	int frame = 1;
	for (std::size_t call : navigator_.call_stack(at))
		std::fprintf(out_, "#%d  %s  (the call at step %zu)\n", frame++,
			     format_address(replay_.pc_at(call), symbols_.symbolizer()).c_str(), call);
	std::fprintf(out_, "    (the frames above began before the recording: --symbols VMLINUX unwinds them with ORC)\n");
	return true;
}

bool ReplayShell::last_write(const std::vector<std::string> &words, bool all)
{
	if (words.size() < 2)
		return fail(words[0] + " ADDR [LEN]");
	auto address = address_of(words[1]);
	auto length = words.size() > 2 ? count_of(words[2]) : std::optional<std::uint64_t>(8);
	if (!address || !length || *length == 0 || *length > 4096)
		return fail(words[0] + " ADDR [LEN]: an address and a length of 1 to 4096 bytes");
	if (!all) {
		auto step = replay_.last_write(*address, *length, replay_.position());
		if (!step) {
			std::fprintf(out_, "no step before this one wrote 0x%" PRIx64 " (%" PRIu64 " bytes)\n", *address,
				     *length);
			return true;
		}
		std::fprintf(out_, "%s\n", where_text(*step).c_str());
		for (std::size_t call : navigator_.call_stack(*step))
			std::fprintf(out_, "    called from %s (step %zu)\n",
				     format_address(replay_.pc_at(call), symbols_.symbolizer()).c_str(), call);
		return true;
	}
	std::size_t shown = 0;
	for (std::size_t j = 0; j < replay_.steps(); j++) {
		if (!replay_.step_writes(j, *address, *length))
			continue;
		// Each byte as x shows it: ?? where the recording does not know it (an unseen store's).
		auto hex_at = [&](std::size_t position) {
			std::string out;
			for (std::uint64_t i = 0; i < *length; i++) {
				auto byte = replay_.read_at(*address + i, 1, position);
				out += byte.empty() ? "??" : dbg::rsp::to_hex(byte);
			}
			return out;
		};
		std::fprintf(out_, "%s\n    %s -> %s\n", where_text(j).c_str(), hex_at(j).c_str(), hex_at(j + 1).c_str());
		shown++;
	}
	if (!shown)
		std::fprintf(out_, "no step wrote 0x%" PRIx64 " (%" PRIu64 " bytes)\n", *address, *length);
	return true;
}

bool ReplayShell::accesses()
{
	std::size_t at = replay_.position();
	if (at == replay_.steps()) {
		std::fprintf(out_, "(the end of the recording: no instruction runs here)\n");
		return true;
	}
	for (const replay::MemoryEvent &event : replay_.step(at).memory) {
		std::string bytes;
		if (event.kind == replay::AccessKind::Unseen && event.maybe)
			bytes = "(an XSAVE may have stored here: its bytes are unknown from here on)";
		else if (event.kind == replay::AccessKind::Unseen)
			bytes = "(a store the recording did not see: its bytes are unknown from here on)";
		else if (event.writes())	// ?? for each byte it could not read first, as x shows them
			bytes = (event.has_before() ? dbg::rsp::to_hex(event.before) : std::string(2 * event.length(), '?')) +
				" -> " + dbg::rsp::to_hex(event.after);
		else
			bytes = dbg::rsp::to_hex(event.before);
		std::fprintf(out_, "%-7s 0x%016" PRIx64 " %4zu  %s\n", access_name(event), event.address,
			     event.length(), bytes.c_str());
	}
	if (replay_.step(at).memory.empty())
		std::fprintf(out_, "(no memory recorded for this step)\n");
	return true;
}

bool ReplayShell::when(const std::vector<std::string> &words, bool forward)
{
	std::string expr;
	for (std::size_t i = 1; i < words.size(); i++)
		expr += words[i];
	auto eq = expr.find("==");
	if (eq == std::string::npos)
		return fail(words[0] + " REG==VALUE");
	std::string name = expr.substr(0, eq);
	if (!name.empty() && name[0] == '$')
		name.erase(0, 1);
	auto value = parse_hex(expr.substr(eq + 2));
	if (!value)
		return fail(words[0] + ": '" + expr.substr(eq + 2) + "' is not a number");
	if (replay_.register_index(name) < 0)
		return fail("no register '" + name + "' in the recording");
	auto found = navigator_.find_register(name, static_cast<std::uint64_t>(*value), replay_.position(), forward);
	if (!found) {
		std::fprintf(out_, "%s never holds that %s this step\n", name.c_str(), forward ? "after" : "before");
		return true;
	}
	replay_.seek(*found);
	print_where();
	return true;
}

bool ReplayShell::run(const std::string &line)
{
	auto words = split_words(line);
	if (words.empty() || words[0][0] == '#')
		return true;
	const std::string &verb = words[0];
	static const std::vector<std::string> moves = {"stepi", "si", "reverse-stepi", "rsi", "nexti", "ni",
							"reverse-nexti", "rni", "finish", "reverse-finish"};
	if (std::find(moves.begin(), moves.end(), verb) != moves.end())
		return move(words);
	if (verb == "goto" && words.size() == 2)
		return go_to(words[1]);
	if (verb == "registers" || verb == "regs" || (verb == "info" && words.size() > 1 && words[1] == "registers"))
		return registers(std::vector<std::string>(words.begin() + (verb == "info" ? 2 : 1), words.end()));
	if (verb == "x")
		return examine(words);
	if (verb == "bt" || verb == "backtrace")
		return backtrace();
	if (verb == "last-write" || verb == "writes")
		return last_write(words, verb == "writes");
	if (verb == "accesses")
		return accesses();
	if (verb == "when" || verb == "reverse-when")
		return when(words, verb == "when");
	if (verb == "where") {
		print_where();
		return true;
	}
	if (verb == "info") {
		print_summary();
		return true;
	}
	if (verb == "help") {
		std::fputs(kShellHelp, out_);
		return true;
	}
	return fail("unknown command '" + verb + "' (help lists them)");
}

}  // namespace vtice::console
