// libFuzzer target: the debugger's command lines as `vtice attach --batch`
// runs them, parser and expressions and all, against a stopped target whose
// memory, breakpoints and stops are scripted (tests/debugger). Each input is
// a batch: one command per line; block commands read the lines after them.
// Any input must end in output or errors, never a crash, a hang or memory
// without bound. `trace` is left out: it writes files and steps for long.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "commands/command.hpp"
#include "scripted_target.hpp"

using namespace vtice::dbg;

namespace {

constexpr std::size_t kMaxLines = 64, kMaxLine = 512;

std::deque<std::string> batch_lines(std::string_view input)
{
	std::deque<std::string> lines;
	while (!input.empty() && lines.size() < kMaxLines) {
		std::size_t end = input.find('\n');
		std::string_view line = input.substr(0, end);
		lines.emplace_back(line.substr(0, kMaxLine));
		input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
	}
	return lines;
}

bool left_out(const std::string &line)
{
	std::size_t start = line.find_first_not_of(" \t");
	return start != std::string::npos && line.compare(start, 5, "trace") == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	std::deque<std::string> lines = batch_lines(std::string_view(reinterpret_cast<const char *>(data), size));
	auto target = std::make_unique<fake::ScriptedTarget>();
	// A few crossings for continue to stop at, wherever breakpoints land.
	for (std::uint64_t i = 0; i < 4; i++)
		target->script.push_back({.pc = fake::ScriptedTarget::kCode + 0x40 * i, .rdi = i});
	Session session(std::move(target));
	StringOutput out;
	CommandContext ctx{session, out, 100};
	ctx.read_line = [&lines]() -> std::optional<std::string> {
		if (lines.empty())
			return std::nullopt;
		std::string line = lines.front();
		lines.pop_front();
		return line;
	};
	if (!session.attach())
		return 0;
	while (!lines.empty() && session.state() != SessionState::Detached) {
		std::string line = lines.front();
		lines.pop_front();
		if (!left_out(line))
			(void)execute_line(ctx, line);
	}
	return 0;
}
