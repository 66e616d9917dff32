// A scripted debugger for the TUI unit tests: a straight-line listing of
// 4-byte instructions, breakpoints, and a log of every engine call, so a test
// can assert which call a key produced.
#pragma once

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "model.hpp"

namespace vtice::tui::testing {

class FakeModel final : public Model {
public:
	static constexpr std::uint64_t kBase = 0xffffffff81001000ull;
	static constexpr int kInstructions = 200;

	std::vector<std::string> log;
	std::uint64_t pc_value = kBase + 4 * 10;
	RunState run_state = RunState::Stopped;
	std::string reason = "attached";
	std::uint64_t generation = 1;
	std::set<std::uint64_t> breakpoint_set;
	std::vector<std::string> names = {"break", "backtrace", "bt", "continue", "c", "delete",
					  "disassemble", "finish", "help", "info", "next", "step",
					  "stepi", "trace", "x"};
	TraceTree tree;
	bool has_trace = false;
	bool backwards = false;  // runs_backwards()
	std::optional<std::uint64_t> replay_at;  // replay_instruction()
	std::set<std::uint64_t> unreadable;      // read_memory() of any of them fails whole
	int reads = 0;                           // read_memory() calls
	std::string trace_source;  // file the fake `trace` command copies to -o

	std::string target_name() const override { return "fake:1234"; }
	bool runs_backwards() const override { return backwards; }
	RunState state() const override { return run_state; }
	std::string stop_reason() const override { return reason; }
	std::uint64_t stop_generation() const override { return generation; }

	std::vector<RegisterRow> registers() override
	{
		log.push_back("registers");
		return {{"rax", hex(generation), true}, {"rbx", "0x0", false},
			{"rsp", "0xffffc90000010000", false}, {"rip", hex(pc_value), true}};
	}
	std::optional<std::uint64_t> pc() override { return pc_value; }

	std::vector<DisasmRow> disassemble(std::uint64_t address, int before, int after) override
	{
		int at = static_cast<int>((address - kBase) / 4);
		std::vector<DisasmRow> rows;
		for (int i = std::max(at - before, 0); i < std::min(at + after, kInstructions); ++i) {
			std::uint64_t a = kBase + 4 * i;
			rows.push_back({a, "func+" + hex(4 * i), "00 00 00 00", "insn_" + std::to_string(i),
					breakpoint_set.count(a) != 0, a == pc_value});
		}
		return rows;
	}
	std::vector<FrameRow> backtrace(int) override
	{
		return {{0, pc_value, "func+" + hex(pc_value - kBase)}, {1, kBase + 0x400, "caller+0x10"}};
	}
	Result<std::vector<std::uint8_t>> read_memory(std::uint64_t address, std::size_t length) override
	{
		reads++;
		for (std::uint64_t at = address; at < address + length; ++at)
			if (unreadable.count(at))
				return make_error("cannot read memory at " + hex(at));
		std::vector<std::uint8_t> bytes(length);
		for (std::size_t i = 0; i < length; ++i)
			bytes[i] = static_cast<std::uint8_t>(address + i);
		return bytes;
	}
	std::vector<BreakpointRow> breakpoints() override
	{
		std::vector<BreakpointRow> rows;
		int id = 1;
		for (auto a : breakpoint_set)
			rows.push_back({id++, a, "func+" + hex(a - kBase), "sw", true, 0});
		return rows;
	}
	const TraceTree *trace() override { return has_trace ? &tree : nullptr; }
	std::optional<std::uint64_t> replay_instruction() override { return replay_at; }
	std::optional<std::uint64_t> default_memory_address() override { return 0xffffc90000010000ull; }
	Result<std::uint64_t> evaluate(const std::string &expression) override
	{
		if (expression == "func")
			return kBase;
		if (expression.rfind("0x", 0) == 0)
			return std::stoull(expression, nullptr, 16);
		return make_error("no symbol '" + expression + "'");
	}

	Result<void> toggle_breakpoint(std::uint64_t address) override
	{
		log.push_back("toggle " + hex(address));
		if (!breakpoint_set.erase(address))
			breakpoint_set.insert(address);
		return {};
	}
	Result<void> resume(Resume how) override
	{
		static const char *names[] = {
			"continue",	    "step-into",	"step-over",	    "step-out",
			"reverse-continue", "reverse-step-into", "reverse-step-over", "reverse-step-out",
		};
		log.push_back(names[static_cast<int>(how)]);
		if (is_reverse(how) && !backwards)
			return make_error("the target cannot run backwards");
		if (is_reverse(how)) {
			stop_at(pc_value - 4, "step back");
			return {};
		}
		if (how == Resume::Continue) {
			run_state = RunState::Running;
			return {};
		}
		stop_at(pc_value + 4, "step");
		return {};
	}
	std::optional<StopEvent> poll(int) override
	{
		if (run_state != RunState::Running)
			return std::nullopt;
		auto next = breakpoint_set.upper_bound(pc_value);
		if (next == breakpoint_set.end())
			return std::nullopt;  // runs until interrupted
		stop_at(*next, "breakpoint");
		return StopEvent{RunState::Stopped, reason};
	}
	Result<void> interrupt() override
	{
		log.push_back("interrupt");
		stop_at(pc_value + 400, "interrupted");
		return {};
	}
	CommandOutput execute(const std::string &line) override
	{
		log.push_back("execute " + line);
		if (line.rfind("break ", 0) == 0) {
			auto address = evaluate(line.substr(6));
			if (!address)
				return {{address.error().to_string()}, true};
			breakpoint_set.insert(*address);
			return {{"Breakpoint at " + hex(*address)}};
		}
		if (line == "stepi") {
			stop_at(pc_value + 4, "step");
			return {};
		}
		if (line.rfind("trace", 0) == 0) {
			// Stands for the engine's trace command: "writes" the demo trace to -o.
			auto at = line.find(" -o ");
			if (at == std::string::npos)
				return {{"trace: no -o"}, true};
			std::ifstream in(trace_source, std::ios::binary);
			std::string path = line.substr(at + 4);
			path = path.substr(0, path.find(' '));
			std::ofstream out(path, std::ios::binary);
			out << in.rdbuf();
			return {{"traced"}};
		}
		if (line == "detach")
			return {{"detached"}, false, true};
		return {{"unknown command: " + line}, true};
	}
	std::vector<std::string> command_names() const override { return names; }

private:
	void stop_at(std::uint64_t address, std::string why)
	{
		pc_value = address;
		reason = std::move(why);
		run_state = RunState::Stopped;
		++generation;
	}
};

}  // namespace vtice::tui::testing
