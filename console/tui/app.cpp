#include "app.hpp"

#include <algorithm>

#include "vtice/interrupts.hpp"

namespace vtice::tui {
namespace {

// Tab order: the command line first, then the panes as the eye reads them.
constexpr PaneId kFocusOrder[] = {
	PaneId::Command, PaneId::Disasm, PaneId::Registers, PaneId::Backtrace,
	PaneId::Breakpoints, PaneId::Memory, PaneId::Trace, PaneId::Output,
};

// While the target runs, how often the loop looks for its stop.
constexpr int kPollMs = 50;
// While it is stopped, how often the loop looks for an ending signal.
constexpr int kIdlePollMs = 200;
constexpr int kInterruptWaitMs = 500;

}  // namespace

App::App(Terminal &terminal, Model &model, const std::vector<std::string> &intro)
	: terminal_(terminal), model_(model)
{
	auto add = [this](auto pane) {
		auto *raw = pane.get();
		panes_[static_cast<int>(raw->id())] = raw;
		owned_.push_back(std::move(pane));
		return raw;
	};
	registers_ = add(std::make_unique<RegistersPane>(model));
	disasm_ = add(std::make_unique<DisasmPane>(model, *this));
	add(std::make_unique<BacktracePane>(model, *this));
	add(std::make_unique<BreakpointsPane>(model, *this));
	memory_ = add(std::make_unique<MemoryPane>(model));
	trace_ = add(std::make_unique<TracePane>(model));
	output_ = add(std::make_unique<OutputPane>());
	add(std::make_unique<HelpPane>());
	command_ = add(std::make_unique<CommandLine>([this] { return completion_names(); }, this));
	seen_generation_ = model.stop_generation();
	for (const auto &line : intro)
		print(line, Style::Dim);
	print("vtice: attached to " + model.target_name() + ". F1 or Esc shows the keys.", Style::Dim);
	if (model.state() == RunState::Stopped)
		stopped({RunState::Stopped, model.stop_reason()});
}

int App::run()
{
	render();
	// SIGTERM and SIGHUP end the screen; the caller detaches.
	while (!quit_ && !interrupts::end_signal()) {
		bool running = model_.state() == RunState::Running;
		Key key = terminal_.read_key(running ? kPollMs : kIdlePollMs);
		bool changed = running && poll_target(0);
		if (key != kKeyNone)
			changed |= (handle_key(key) & (kRedraw | kHandled)) != 0;
		if (changed && !quit_)
			render();
	}
	return 0;
}

bool App::poll_target(int timeout_ms)
{
	if (model_.state() != RunState::Running)
		return false;
	auto event = model_.poll(timeout_ms);
	if (!event)
		return false;
	stopped(*event);
	return true;
}

void App::stopped(const StopEvent &event)
{
	seen_generation_ = model_.stop_generation();
	for (const auto &line : event.output)
		print(line, event.error ? Style::Error : Style::Normal);
	switch (event.state) {
	case RunState::Stopped:
		if (event.moved)
			print("stopped: " + event.reason, Style::Prompt);
		break;
	case RunState::Exited: print("target exited: " + event.reason, Style::Error); break;
	case RunState::Disconnected: print("target disconnected: " + event.reason, Style::Error); break;
	case RunState::Running: return;
	}
	for (auto &pane : owned_)
		pane->on_stop();
	open_pending_graph();
}

// After a command that did not move the target: same RIP, but breakpoints,
// registers or memory may have changed under the views.
void App::refresh_views()
{
	for (auto &pane : owned_)
		if (pane->id() != PaneId::Disasm && pane->id() != PaneId::Memory)
			pane->on_stop();
	memory_->forget_bytes();
	if (auto cursor = disasm_->cursor_address()) {
		disasm_->on_stop();
		disasm_->show(*cursor);
	}
}

KeyFlags App::handle_key(Key key)
{
	if (key == kKeyNone)
		return kIgnored;
	if (KeyFlags flags = global_key(key))
		return flags;
	if (help_visible_) {
		if (KeyFlags flags = pane(PaneId::Help).on_key(key))
			return flags;
		help_visible_ = false;
		if (key == 'q')
			return kConsumed;
	}
	KeyFlags flags = pane(focus_).on_key(key);
	if (flags & kSubmit)
		run_command(command_->take_line());
	if (flags & kHandled)
		return quit_ ? flags | kQuit : flags;
	return fallback_key(key);
}

KeyFlags App::global_key(Key key)
{
	switch (key) {
	case kKeyResize:
		terminal_.refresh_size();
		return kConsumed;
	case kKeyEscape: case key_f(1):
		help_visible_ = !help_visible_;
		return kConsumed;
	case key_f(5): resume(Resume::Continue); return kConsumed;
	case key_f(8): resume(Resume::StepInto); return kConsumed;
	case key_f(10): resume(Resume::StepOver); return kConsumed;
	case key_f(12): case key_shift_f(11): resume(Resume::StepOut); return kConsumed;
	case key_shift_f(5): resume(Resume::ReverseContinue); return kConsumed;
	case key_shift_f(8): resume(Resume::ReverseStepInto); return kConsumed;
	case key_shift_f(10): resume(Resume::ReverseStepOver); return kConsumed;
	case key_shift_f(12): resume(Resume::ReverseStepOut); return kConsumed;
	case key_f(9): toggle_breakpoint(); return kConsumed;
	case kKeyCtrlC: interrupt(); return kConsumed;
	case key_f(2): toggle_zoom(focus_); return kConsumed;
	case key_f(6):  // SoftICE: to the code, and from the code back to the command line
		focus_ = focus_ == PaneId::Disasm ? PaneId::Command : PaneId::Disasm;
		return kConsumed;
	case kKeyCtrlL: return kConsumed;
	case kKeyBackTab: cycle_focus(-1); return kConsumed;
	default: return kIgnored;
	}
}

KeyFlags App::fallback_key(Key key)
{
	if (key == kKeyTab) {
		cycle_focus(1);
		return kConsumed;
	}
	if (focus_ == PaneId::Command)
		return kIgnored;
	// q alone quits only here: on the command line it is a letter.
	if (key == 'q')
		return quit();
	if (!is_printable(key))
		return kIgnored;
	// SoftICE habit: typing anywhere goes to the command line.
	set_focus(PaneId::Command);
	command_->insert(static_cast<char>(key));
	return kConsumed;
}

KeyFlags App::quit()
{
	quit_ = true;
	return kConsumed | kQuit;
}

void App::set_focus(PaneId id)
{
	if (id != PaneId::Help)
		focus_ = id;
}

void App::cycle_focus(int direction)
{
	std::vector<PaneId> ring;
	for (PaneId id : kFocusOrder)
		if (layout_.visible(id) || id == PaneId::Command)
			ring.push_back(id);
	auto at = std::find(ring.begin(), ring.end(), focus_);
	int index = at == ring.end() ? 0 : static_cast<int>(at - ring.begin());
	int count = static_cast<int>(ring.size());
	focus_ = ring[((index + direction) % count + count) % count];
}

void App::toggle_zoom(PaneId id)
{
	zoomed_ = zoomed_ == id || id == PaneId::Command ? std::nullopt : std::optional<PaneId>(id);
	if (zoomed_)
		focus_ = id;
}

void App::resume(Resume how)
{
	if (model_.state() == RunState::Running) {
		print("the target is running: Ctrl-C interrupts it", Style::Error);
		return;
	}
	auto result = model_.resume(how);
	if (!result) {
		print(result.error().to_string(), Style::Error);
		return;
	}
	if (!sync_stop() && model_.state() == RunState::Running)
		print("running... (Ctrl-C interrupts)", Style::Dim);
}

void App::toggle_breakpoint()
{
	auto address = disasm_->cursor_address();
	if (!address) {
		print("no disassembly cursor to set a breakpoint at", Style::Error);
		return;
	}
	auto result = model_.toggle_breakpoint(*address);
	if (!result)
		print(result.error().to_string(), Style::Error);
	refresh_views();
}

void App::interrupt()
{
	if (model_.state() != RunState::Running) {
		command_->set_text({});
		return;
	}
	auto result = model_.interrupt();
	if (!result) {
		print(result.error().to_string(), Style::Error);
		return;
	}
	// The stop normally follows within a round trip; pick it up now so the
	// views change with the key press rather than at the next poll.
	if (!poll_target(kInterruptWaitMs))
		sync_stop();
}

bool App::sync_stop()
{
	if (model_.state() == RunState::Running || model_.stop_generation() == seen_generation_)
		return false;
	stopped({model_.state(), model_.stop_reason()});
	return true;
}

void App::show_code(std::uint64_t address)
{
	disasm_->show(address);
}

void App::show_memory(std::uint64_t address)
{
	memory_->show(address);
}

void App::print(const std::string &line, Style style)
{
	output_->append(line, style);
}

}  // namespace vtice::tui
