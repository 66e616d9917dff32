// The debugger screen: owns the panes, routes keys, runs the main loop.
//
// Key routing, in order: global keys (F5/F8/F10/F12/Shift-F11 run control,
// F9 breakpoint, Ctrl-C interrupt, Esc/F1 help, resize); the help pane while
// it is open; the focused pane; then fallbacks (Tab cycles panes, q quits,
// any other printable key starts typing on the command line). Panes bind no
// letters that start a command, so typing a command from a pane just works.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "layout.hpp"
#include "model.hpp"
#include "panes.hpp"
#include "terminal.hpp"

namespace vtice::tui {

class App final : public PaneHost {
public:
	// intro: lines for the output pane ahead of the first stop (what attaching printed).
	App(Terminal &terminal, Model &model, const std::vector<std::string> &intro = {});

	// Runs until the user quits; returns the process exit code.
	int run();
	// Dispatches one key (the main loop and the tests use it).
	KeyFlags handle_key(Key key);
	// Waits up to timeout_ms for a running target and picks up its stop.
	bool poll_target(int timeout_ms);
	// Draws the whole screen for the terminal's current size.
	void render();

	void show_code(std::uint64_t address) override;
	void show_memory(std::uint64_t address) override;
	void print(const std::string &line, Style style = Style::Normal) override;

	PaneId focus() const { return focus_; }
	void set_focus(PaneId id);
	bool help_visible() const { return help_visible_; }
	std::optional<PaneId> zoomed() const { return zoomed_; }
	const Layout &layout() const { return layout_; }
	bool quitting() const { return quit_; }

	Pane &pane(PaneId id) { return *panes_[static_cast<int>(id)]; }
	CommandLine &command_line() { return *command_; }
	OutputPane &output() { return *output_; }
	DisasmPane &disasm() { return *disasm_; }
	MemoryPane &memory() { return *memory_; }
	TracePane &trace() { return *trace_; }

	// Commands the TUI itself answers (completion offers them too).
	static std::vector<std::string> local_command_names();
	// `graph FILE`: FILE's call tree in the trace pane ("" the engine's latest).
	void open_graph(const std::string &path);

private:
	KeyFlags global_key(Key key);
	KeyFlags fallback_key(Key key);
	KeyFlags quit();
	void run_command(const std::string &line);
	bool local_command(const std::string &verb, const std::string &argument);
	std::string with_trace_file(const std::string &line);
	void open_pending_graph();
	void after_command(std::uint64_t generation_before);
	void resume(Resume how);
	void toggle_breakpoint();
	void interrupt();
	void refresh_views();
	void stopped(const StopEvent &event);
	// Catches up with a stop that happened without a poll (a synchronous step).
	bool sync_stop();
	void cycle_focus(int direction);
	void toggle_zoom(PaneId id);
	void draw_status();
	void draw_pane(Pane &pane, const Rect &rect);
	std::vector<std::string> completion_names() const;

	Terminal &terminal_;
	Model &model_;
	std::array<Pane *, kPaneCount> panes_{};
	std::vector<std::unique_ptr<Pane>> owned_;
	RegistersPane *registers_;
	DisasmPane *disasm_;
	MemoryPane *memory_;
	TracePane *trace_;
	OutputPane *output_;
	CommandLine *command_;
	Layout layout_;
	PaneId focus_ = PaneId::Command;
	std::optional<PaneId> zoomed_;
	bool help_visible_ = false;
	bool quit_ = false;
	std::uint64_t seen_generation_ = 0;
	std::unique_ptr<TraceTree> opened_trace_;  // from `graph FILE`
	std::string pending_graph_;  // trace file the running `trace` command writes
	int traces_run_ = 0;
};

// Opens the curses terminal and runs the screen on model; intro lines (what
// attaching printed) start the output pane.
// graph: a trace file the trace pane shows from the start ("" none).
int run_tui(Model &model, const std::vector<std::string> &intro = {}, const std::string &graph = "");

}  // namespace vtice::tui
