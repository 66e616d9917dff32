// What the TUI needs from the debugger engine, as plain data.
//
// The panes render from this interface only. session_model.cpp adapts the
// engine (debugger::Session and its command table) to it; the unit tests use
// a scripted model. Keeping the seam this small is what lets the panes be
// tested without a target and the engine be tested without a terminal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_tree.hpp"
#include "vtice/result.hpp"

namespace vtice::tui {

enum class RunState { Stopped, Running, Exited, Disconnected };

// The Reverse ones need a target that runs backwards (Model::runs_backwards).
enum class Resume {
	Continue, StepInto, StepOver, StepOut,
	ReverseContinue, ReverseStepInto, ReverseStepOver, ReverseStepOut,
};
inline bool is_reverse(Resume how) { return how >= Resume::ReverseContinue; }

struct RegisterRow {
	std::string name;   // "rip"
	std::string value;  // "0xffffffff81234560" (the engine decides the format)
	bool changed = false;  // differs from the previous stop
};

struct DisasmRow {
	std::uint64_t address = 0;
	std::string location;  // "do_sys_openat2+0x4"
	std::string bytes;     // "48 89 e5"
	std::string text;      // "mov rbp, rsp"
	bool breakpoint = false;
	bool current = false;  // at the program counter
};

struct FrameRow {
	int level = 0;
	std::uint64_t pc = 0;
	std::string location;
};

struct BreakpointRow {
	int id = 0;
	std::uint64_t address = 0;
	std::string location;
	std::string kind;  // "sw", "hw", "watch"
	bool enabled = true;
	std::uint64_t hits = 0;
};

// A state change the TUI should react to (a stop after continue or step).
struct StopEvent {
	RunState state = RunState::Stopped;
	std::string reason;  // "breakpoint 1, do_sys_openat2", "step", "interrupted"
	// A command that outlived the quick wait (`continue` typed on the
	// command line) delivers its output with the stop.
	std::vector<std::string> output;
	bool error = false;
	bool moved = true;  // false: the job ended without running the target
};

// Output of one command-line command: plain text lines as batch mode prints them.
struct CommandOutput {
	std::vector<std::string> lines;
	bool error = false;
	bool quit = false;  // the command asked to leave (quit, q, detach)
};

// "0xffffffff81234560": how the views and the model spell addresses.
std::string hex(std::uint64_t value);

class Model {
public:
	virtual ~Model() = default;

	virtual std::string target_name() const = 0;
	// The target can move backwards (a recording served by serve-replay).
	virtual bool runs_backwards() const = 0;
	virtual RunState state() const = 0;
	virtual std::string stop_reason() const = 0;
	// Counts stops; a command that stopped the target anew (step typed on the
	// command line) changes it, so the views know to follow the new RIP.
	virtual std::uint64_t stop_generation() const = 0;

	virtual std::vector<RegisterRow> registers() = 0;
	virtual std::optional<std::uint64_t> pc() = 0;
	// Instructions around address: up to `before` rows ahead of it (when the
	// engine can find instruction boundaries) and `after` rows from it on.
	virtual std::vector<DisasmRow> disassemble(std::uint64_t address, int before, int after) = 0;
	virtual std::vector<FrameRow> backtrace(int max_frames) = 0;
	virtual Result<std::vector<std::uint8_t>> read_memory(std::uint64_t address, std::size_t length) = 0;
	virtual std::vector<BreakpointRow> breakpoints() = 0;
	// The latest call tree (from the trace command), or null.
	virtual const TraceTree *trace() = 0;
	// On a recording's replay: the instruction of its trace the replay stands
	// at (the trace pane follows it); nothing on a live target.
	virtual std::optional<std::uint64_t> replay_instruction() = 0;
	// The address the memory pane starts at when the user picked none (e.g. rsp).
	virtual std::optional<std::uint64_t> default_memory_address() = 0;
	// Evaluates an address expression ("rsp", "do_sys_openat2", "0x1000").
	virtual Result<std::uint64_t> evaluate(const std::string &expression) = 0;

	virtual Result<void> toggle_breakpoint(std::uint64_t address) = 0;
	// Starts the target; state() is Running until poll() reports the stop.
	virtual Result<void> resume(Resume how) = 0;
	// Waits up to timeout_ms for the running target to stop.
	virtual std::optional<StopEvent> poll(int timeout_ms) = 0;
	virtual Result<void> interrupt() = 0;

	// Runs one line through the engine's command table (as batch mode does).
	virtual CommandOutput execute(const std::string &line) = 0;
	// Names and aliases in the command table, for Tab completion.
	virtual std::vector<std::string> command_names() const = 0;
};

}  // namespace vtice::tui
