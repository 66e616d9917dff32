// The debugger engine: one Target plus what a person debugging it needs —
// symbols, breakpoints with conditions, stepping (into/over/out), registers
// with change flags, virtual memory, backtraces, expressions.
//
// Views (the ncurses TUI, batch mode) drive a Session through the command
// table (debugger/commands/command.hpp) or call it directly. Blocking calls
// (cont, step_*) return the stop; a TUI that must stay responsive uses
// resume() + poll() and interrupt().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "disassembler.hpp"
#include "output.hpp"
#include "symbol_source.hpp"
#include "target.hpp"
#include "expr.hpp"
#include "module_source.hpp"
#include "symbols/memory_reader.hpp"
#include "unwind.hpp"
#include "vtice/result.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice::dbg {

namespace btf {
class KernelTypes;
}

struct BreakpointSpec {
	std::string location;    // "do_sys_openat2", "vfs_open+0x10", "0xffffffff81234567", "*$rax"
	BreakKind type = BreakKind::Software;
	unsigned length = 1;     // watched bytes for watchpoints
	std::string condition;   // expression; empty = always stop
	bool temporary = false;  // deleted on first stop
};

struct Breakpoint {
	int id = 0;
	BreakpointSpec spec;
	std::uint64_t address = 0;
	bool enabled = true;
	bool inserted = false;
	unsigned hits = 0;                  // stops, plus crossings passed by the ignore count (gdb)
	unsigned ignore_count = 0;          // crossings still to pass without stopping ("ignore N COUNT")
	std::vector<std::string> commands;  // console lines to run when it stops ("commands N")
};

struct RegisterView {
	const RegisterInfo *info = nullptr;
	std::uint64_t value = 0;
	bool changed = false;  // differs from the previous stop
};

enum class SessionState : std::uint8_t { Stopped, Running, Detached };

// Why a blocking run command returned.
struct StopInfo {
	StopEvent event;
	std::uint64_t pc = 0;
	std::optional<int> breakpoint;  // id of the breakpoint that caused it
	// That breakpoint's command list as of the stop: a tbreak is deleted by
	// then, and the list may change its own breakpoint while it runs.
	std::vector<std::string> commands;
	std::string describe(const Symbolizer &symbolize) const;
};

// Guest memory known without asking the target: read_memory serves a read
// it covers (kernel_cache.hpp: what an earlier session read from this kernel).
class MemoryOverlay {
public:
	virtual ~MemoryOverlay() = default;
	virtual std::optional<std::vector<std::uint8_t>> read(std::uint64_t address, std::size_t length) const = 0;
};

class Session {
public:
	// How long one single step may take before the target counts as lost.
	static constexpr int kStepTimeoutMs = 10000;
	// Steps sent again when one ran nothing (raw_step in session_run.cpp).
	static constexpr int kStepRetries = 3;

	explicit Session(std::unique_ptr<Target> target);
	~Session();
	Session(const Session &) = delete;
	Session &operator=(const Session &) = delete;

	Target &target() { return *target_; }
	SessionState state() const { return state_; }

	// Reads the stop state and registers after connecting ('?' + g).
	Result<StopInfo> attach();
	// Removes every breakpoint and watchpoint and lets the target run on.
	Result<void> detach();
	// What detach() did, as the console says it (a recording does not run on).
	std::string detached_line() const;
	// The target is a recording served by vtice serve-replay, not a machine.
	bool is_recording() const { return target_->features().stub == "vtice serve-replay"; }
	// The same, but the target stays stopped where it is, for another
	// debugger to take over (gdb's `disconnect`; QEMU keeps a guest paused
	// when its debugger goes without detaching).
	Result<void> disconnect();

	// Symbols and unwinding data; either may be absent.
	void set_symbols(std::unique_ptr<SymbolSource> symbols);
	const SymbolSource *symbols() const { return symbols_.get(); }
	// Names addresses with the symbols, and with the modules' where they have none.
	Symbolizer symbolizer() const;
	// The kernel's loaded modules, found through the target: names for
	// symbolizer(), and addresses of names the symbols lack in expressions.
	void set_modules(std::shared_ptr<ModuleSource> modules) { modules_ = std::move(modules); }
	const std::shared_ptr<ModuleSource> &modules() const { return modules_; }
	void set_unwinder(std::unique_ptr<Unwinder> unwinder);
	// The KASLR slide found at attach (0 when the kernel was not moved).
	void set_kaslr_slide(std::int64_t slide) { kaslr_slide_ = slide; }
	std::optional<std::int64_t> kaslr_slide() const { return kaslr_slide_; }
	const Unwinder *unwinder() const { return unwinder_.get(); }
	Unwinder *unwinder() { return unwinder_.get(); }
	// Kernel types (BTF), loaded on first use (debugger/btf/btf_source.hpp).
	btf::KernelTypes &kernel_types() { return *kernel_types_; }

	// "sym", "sym+0x10", "0xffffffff81000000", or any expression.
	Result<std::uint64_t> resolve_location(std::string_view text);
	std::optional<Result<std::uint64_t>> pick_copy(std::string_view text) const;
	// $rax, symbols, *(u64*)... see debugger/expr.hpp for the grammar.
	Result<std::uint64_t> evaluate(std::string_view expression);

	// Registers of the selected thread, as of the last stop.
	Result<std::vector<RegisterView>> registers();
	Result<std::uint64_t> register_value(std::string_view name);
	Result<void> set_register(std::string_view name, std::uint64_t value);
	Result<std::uint64_t> pc();

	// Virtual memory of the selected vCPU. When the stub cannot read a
	// virtual address it walks the page tables from CR3 over physical reads.
	Result<std::vector<std::uint8_t>> read_memory(std::uint64_t address, std::size_t length);
	// read_memory as the symbols/ readers take it (a whole read or none),
	// for as long as the session lives.
	symbols::MemoryReader memory_reader();
	void set_memory_overlay(std::shared_ptr<const MemoryOverlay> overlay) { overlay_ = std::move(overlay); }
	// Sees every read the target answered while set (empty: none).
	using MemoryTap = std::function<void(std::uint64_t address, const std::vector<std::uint8_t> &bytes)>;
	void set_memory_tap(MemoryTap tap) { tap_ = std::move(tap); }
	Result<void> write_memory(std::uint64_t address, const std::vector<std::uint8_t> &bytes);
	Result<std::uint64_t> translate(std::uint64_t address);

	Result<int> add_breakpoint(const BreakpointSpec &spec);
	Result<void> delete_breakpoint(int id);
	Result<void> enable_breakpoint(int id, bool enabled);
	const std::vector<Breakpoint> &breakpoints() const { return breakpoints_; }
	// gdb's condition, ignore and commands; each names the breakpoint by id.
	// An empty condition makes it unconditional; a new one is checked as
	// add_breakpoint checks it, and a bad one leaves the old in place.
	Result<void> set_condition(int id, const std::string &condition);
	Result<void> set_ignore_count(int id, unsigned count);
	Result<void> set_commands(int id, std::vector<std::string> commands);
	// The breakpoint or watchpoint created last (it may have been deleted since).
	std::optional<int> last_created_breakpoint() const;
	// Counts every stop of the target, steps included: a caller compares two
	// readings to learn whether anything ran in between.
	std::uint64_t stop_count() const { return stop_count_; }

	// Blocking run control; each returns where the target stopped.
	Result<StopInfo> cont(int timeout_ms = -1);
	Result<StopInfo> step_instruction();  // stepi / t
	Result<StopInfo> step_over();         // next / p: calls run to their return
	Result<StopInfo> step_out(int timeout_ms = -1);  // finish: to the caller
	// Backwards, on a target that can (TargetFeatures::reverse: serve-replay).
	Result<StopInfo> reverse_step();
	Result<StopInfo> reverse_cont(int timeout_ms = -1);
	Result<StopInfo> reverse_finish(int timeout_ms = -1);  // back onto the call that entered this function
	Result<StopInfo> reverse_next(int timeout_ms = -1);    // one instruction back, a call undone whole
	// Non-blocking run control for interactive views.
	Result<void> resume();
	Result<std::optional<StopInfo>> poll(int timeout_ms);
	Result<void> interrupt();

	Result<std::vector<Frame>> backtrace(std::size_t max_frames = 64);

	// Decodes count instructions from address (memory as the target has it).
	Result<std::vector<Instruction>> disassemble(std::uint64_t address, std::size_t count);
	const Disassembler &disassembler() const { return *disassembler_; }

	// Called after every stop, e.g. to refresh TUI panes.
	void on_stop(std::function<void(const StopInfo &)> listener);

	// Engine-internal helpers used by the tracer and commands.
	Result<RegisterValues> &cached_registers();
	void invalidate_registers();  // after running the target behind the Session's back
	Result<StopInfo> raw_step();  // one instruction, breakpoints not considered
	Result<StopInfo> run_back_to_call(int timeout_ms);
	// Tells every on_stop listener of a stop (of none when the run failed).
	void announce(const StopInfo &stop);
	void announce(const Result<StopInfo> &stop);
	Result<StopInfo> reverse_step_to_call(StopInfo at, std::uint64_t returned_to, std::uint64_t ret_sp);
	bool step_ran_nothing(const StopInfo &stop) const;
	// Kernel text range for heuristics (stack scan); from symbols when known.
	bool is_kernel_text(std::uint64_t address) const;

private:
	Result<void> leave_target_clean();
	std::optional<bool> five_level_paging();
	Result<StopInfo> finish_stop(const StopEvent &event);
	Result<StopInfo> wait_and_finish(int timeout_ms, bool break_in_now = false);
	Result<void> step_off_breakpoint();
	Result<StopInfo> step_lifting_breakpoint();
	Result<bool> should_stop(StopInfo &info);
	Breakpoint *breakpoint_at(std::uint64_t address);
	Result<Breakpoint *> find_breakpoint(int id);
	Result<void> check_condition(const std::string &condition);
	Result<StopInfo> run_to(std::uint64_t address, std::uint64_t frame_sp, int timeout_ms);
	Result<StopInfo> continue_once(int timeout_ms, ResumeAction action);
	Result<StopInfo> run_until_stop(int timeout_ms, ResumeAction action);
	Result<void> insert(Breakpoint &bp);
	Result<std::vector<std::uint8_t>> read_via_page_walk(std::uint64_t address, std::size_t length);
	ExprContext expr_context();

	std::unique_ptr<Target> target_;
	std::unique_ptr<Disassembler> disassembler_;
	std::unique_ptr<SymbolSource> symbols_;
	std::shared_ptr<ModuleSource> modules_;
	std::shared_ptr<const MemoryOverlay> overlay_;
	MemoryTap tap_;
	std::unique_ptr<Unwinder> unwinder_;
	std::unique_ptr<btf::KernelTypes> kernel_types_;
	std::vector<Breakpoint> breakpoints_;
	int next_breakpoint_id_ = 1;
	std::uint64_t stop_count_ = 0;
	SessionState state_ = SessionState::Stopped;
	Result<RegisterValues> registers_ = make_error("registers not read yet");
	bool registers_valid_ = false;
	RegisterValues previous_registers_;
	std::vector<std::function<void(const StopInfo &)>> listeners_;
	std::optional<std::int64_t> kaslr_slide_;
};

}  // namespace vtice::dbg
