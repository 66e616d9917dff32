#include <cstdlib>
#include <cstring>

#include "commands.hpp"

namespace vtice::dbg {

std::string describe_address(Session &session, std::uint64_t address)
{
	char text[32];
	std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(address));
	auto sym = session.symbols() ? session.symbols()->symbolize(address) : std::nullopt;
	if (!sym)
		return text;
	return std::string(text) + " <" + format_address(address, session.symbolizer()) + ">";
}

void print_pc_line(CommandContext &ctx)
{
	auto pc = ctx.session.pc();
	if (!pc)
		return;
	auto insns = ctx.session.disassemble(*pc, 1);
	std::string text = insns ? ctx.session.disassembler().format(insns->front(), ctx.session.symbolizer())
				 : "(cannot read code)";
	ctx.out.print("=> %s:\t%s\n", describe_address(ctx.session, *pc).c_str(), text.c_str());
}

// A C string of the kernel's, up to max bytes, control bytes escaped.
static std::string kernel_string(Session &session, std::uint64_t address, std::size_t max)
{
	auto bytes = session.read_memory(address, max);
	if (!bytes)
		return "(unreadable: " + bytes.error().message + ")";
	std::string out;
	for (std::uint8_t b : *bytes) {
		if (b == 0)
			break;
		char escaped[8];
		std::snprintf(escaped, sizeof(escaped), "\\x%02x", b);
		out += b >= 0x20 && b < 0x7f ? std::string(1, static_cast<char>(b)) : std::string(escaped);
	}
	return out;
}

// A triple fault or a lockup: the vtice stub says what it saw on that CPU
// ("monitor why": the event the CPU was delivering, interrupts off or the
// APIC timer masked). Other stubs do not know the command.
static void print_stub_why(CommandContext &ctx)
{
	if (ctx.session.target().features().stub != "vtice hypervisor stub")
		return;
	auto why = ctx.session.target().monitor("why");
	if (why && why->rfind("why: ", 0) == 0)
		ctx.out.print("%s%s", why->c_str() + 5, why->back() == '\n' ? "" : "\n");
}

// The vtice stub stops a crashing kernel on entry to panic() or __die()
// (its crash guards): say why at once, for a user who attaches to a dead
// machine. panic(fmt, ...): the format; __die(str, regs, err): str and the
// faulting ip from pt_regs (ip is its 17th word, arch/x86/include/asm/ptrace.h).
static void print_crash_reason(CommandContext &ctx, const StopInfo &stop)
{
	constexpr std::uint64_t kPtRegsIp = 16 * 8;
	if (stop.event.signal == 14) {
		print_stub_why(ctx);
		return;
	}
	if (stop.event.signal != 11)
		return;
	std::string where = format_address(stop.pc, ctx.session.symbolizer());
	auto first = ctx.session.register_value("rdi");
	if (where != "panic" && where != "__die") {
		print_stub_why(ctx);  // a triple fault
		return;
	}
	if (!first)
		return;
	std::string message = kernel_string(ctx.session, *first, 160);
	if (message.size() >= 4 && message.compare(message.size() - 4, 4, "\\x0a") == 0)
		message.resize(message.size() - 4);  // the format's own newline
	if (where == "panic") {
		ctx.out.print("kernel panic: \"%s\"\n", message.c_str());
		return;
	}
	auto regs = ctx.session.register_value("rsi");
	auto ip = regs ? ctx.session.read_memory(*regs + kPtRegsIp, 8) : Result<std::vector<std::uint8_t>>(regs.error());
	std::uint64_t at = 0;
	if (ip)
		std::memcpy(&at, ip->data(), 8);
	ctx.out.print("kernel oops: \"%s\" at %s\n", message.c_str(),
		      ip ? describe_address(ctx.session, at).c_str() : "(pt_regs unreadable)");
}

void print_stop(CommandContext &ctx, const StopInfo &stop)
{
	ctx.reported_stop = stop;
	if (is_silent(stop.commands))
		return;
	ctx.out.print("%s\n", stop.describe(ctx.session.symbolizer()).c_str());
	print_crash_reason(ctx, stop);
	if (ctx.session.state() == SessionState::Stopped)
		print_pc_line(ctx);
}

Result<std::uint64_t> parse_count(const std::string &text, const char *what)
{
	char *end = nullptr;
	unsigned long long v = std::strtoull(text.c_str(), &end, 0);
	if (text.empty() || *end || v == 0 || v > 1000000)
		return make_error(std::string(what) + " '" + text + "' is not a count between 1 and 1000000");
	return v;
}

Result<std::uint64_t> optional_count(const std::vector<std::string> &args, const Command &command)
{
	if (args.size() > 1)
		return usage_error(command);
	if (args.empty())
		return std::uint64_t(1);
	return parse_count(args[0], "count");
}

Result<int> parse_breakpoint_number(const std::string &text)
{
	char *end = nullptr;
	long id = std::strtol(text.c_str(), &end, 10);
	if (text.empty() || *end || id <= 0 || id > 1000000000)
		return make_error("'" + text + "' is not a breakpoint number");
	return static_cast<int>(id);
}

std::string join(const std::vector<std::string> &words, std::size_t from)
{
	std::string out;
	for (std::size_t i = from; i < words.size(); i++)
		out += (i > from ? " " : "") + words[i];
	return out;
}

Error usage_error(const Command &command)
{
	return make_error(std::string("usage: ") + command.usage);
}

}  // namespace vtice::dbg
