// Lines typed on the command line: a few view commands the TUI answers
// itself, everything else through the engine's command table.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "app.hpp"
#include "trace_load.hpp"

namespace vtice::tui {

std::vector<std::string> App::local_command_names()
{
	return {"mem", "code", "focus", "zoom", "graph", "quit", "q", "exit"};
}

std::vector<std::string> App::completion_names() const
{
	auto names = model_.command_names();
	for (auto &name : local_command_names())
		names.push_back(std::move(name));
	return names;
}

static std::string trim(const std::string &text)
{
	auto first = text.find_first_not_of(" \t");
	if (first == std::string::npos)
		return {};
	auto last = text.find_last_not_of(" \t");
	return text.substr(first, last - first + 1);
}

bool App::local_command(const std::string &verb, const std::string &argument)
{
	if (verb == "quit" || verb == "q" || verb == "exit") {
		quit();
		return true;
	}
	if (verb == "focus" || verb == "zoom") {
		auto id = argument.empty() ? std::optional<PaneId>(focus_) : pane_from_name(argument);
		if (!id)
			print(verb + ": no pane '" + argument + "' (registers, disasm, backtrace, breakpoints, "
			      "memory, trace, output)", Style::Error);
		else if (verb == "zoom")
			toggle_zoom(*id);
		else
			set_focus(*id);
		return true;
	}
	if (verb == "graph") {
		open_graph(argument);
		return true;
	}
	if (verb != "mem" && verb != "code")
		return false;
	auto address = model_.evaluate(argument);
	if (!address)
		print(verb + ": " + address.error().to_string(), Style::Error);
	else if (verb == "mem")
		show_memory(*address);
	else
		show_code(*address);
	return true;
}

// `graph FILE` shows a trace file's call tree; `graph` alone goes back to the
// engine's latest trace.
void App::open_graph(const std::string &path)
{
	if (path.empty()) {
		opened_trace_.reset();
		trace_->show_tree(nullptr);
		return;
	}
	auto loaded = load_trace_file(path);
	if (!loaded) {
		print("graph: " + loaded.error().to_string(), Style::Error);
		return;
	}
	if (!loaded->note.empty())
		print("graph: " + loaded->note, Style::Error);
	opened_trace_ = std::make_unique<TraceTree>(std::move(loaded->tree));
	trace_->show_tree(opened_trace_.get());
	print("graph: " + path + " (" + std::to_string(trace_->view().rows().size()) + " rows shown)", Style::Dim);
	if (focus_ == PaneId::Command)
		focus_ = PaneId::Trace;
}

// The engine's `trace` command writes a trace file (-o); the screen reads
// it back into the trace pane when the command is done, so the pane shows
// btf-trace's own decoding of what the engine recorded. Without -o the
// screen picks a file in the temporary directory.
std::string App::with_trace_file(const std::string &line)
{
	std::istringstream words(line);
	std::string word, path;
	bool next_is_path = false, quiet = false;
	while (words >> word) {
		if (next_is_path) {
			path = word;
			next_is_path = false;
		}
		next_is_path = word == "-o" || word == "--output";
		quiet |= word == "--quiet";
	}
	// The graph goes to the trace pane, not as hundreds of output lines.
	std::string out = quiet ? line : line + " --quiet";
	if (path.empty()) {
		std::error_code error;
		auto dir = std::filesystem::temp_directory_path(error);
		path = ((error ? std::filesystem::path("/tmp") : dir) /
			("vtice-tui-" + std::to_string(::getpid()) + "-" + std::to_string(++traces_run_) + ".vtrace"))
			       .string();
		out += " -o " + path;
		print("(trace file: " + path + ")", Style::Dim);
	}
	pending_graph_ = path;
	return out;
}

void App::open_pending_graph()
{
	if (pending_graph_.empty() || model_.state() == RunState::Running)
		return;
	std::string path = std::move(pending_graph_);
	pending_graph_.clear();
	if (std::filesystem::exists(path))
		open_graph(path);
}

void App::run_command(const std::string &raw)
{
	std::string line = trim(raw);
	if (line.empty())
		return;
	print(std::string(CommandLine::kPrompt) + line, Style::Prompt);
	auto space = line.find(' ');
	std::string verb = line.substr(0, space);
	std::string argument = space == std::string::npos ? "" : trim(line.substr(space));
	if (local_command(verb, argument))
		return;
	if (verb == "trace")
		line = with_trace_file(line);
	std::uint64_t generation = model_.stop_generation();
	CommandOutput output = model_.execute(line);
	for (const auto &text : output.lines)
		print(text, output.error ? Style::Error : Style::Normal);
	if (output.quit) {
		quit();
		return;
	}
	after_command(generation);
	open_pending_graph();
}

void App::after_command(std::uint64_t generation_before)
{
	switch (model_.state()) {
	case RunState::Running:
		print("running... (Ctrl-C interrupts)", Style::Dim);
		return;
	case RunState::Stopped:
		if (model_.stop_generation() == generation_before || !sync_stop())
			refresh_views();
		return;
	default:
		stopped({model_.state(), model_.stop_reason()});
	}
}

}  // namespace vtice::tui
