// SessionModel's run control and command line: jobs on one worker thread.
#include <chrono>
#include <cstdio>

#include "app.hpp"
#include "commands/command.hpp"
#include "session_model.hpp"
#include "vtice/escape.hpp"
#include "vtice/interrupts.hpp"
#include "vtice/split_lines.hpp"

namespace vtice::tui {
namespace {

bool exited(const dbg::StopInfo &stop)
{
	return stop.event.reason == dbg::StopReason::Exited || stop.event.reason == dbg::StopReason::Terminated;
}

}  // namespace

void SessionModel::start(std::function<JobResult()> work)
{
	state_ = RunState::Running;
	job_ = std::async(std::launch::async, std::move(work));
}

std::optional<SessionModel::JobResult> SessionModel::collect(int timeout_ms)
{
	if (!busy())
		return std::nullopt;
	auto wait = std::chrono::milliseconds(std::max(timeout_ms, 0));
	if (job_.wait_for(wait) != std::future_status::ready)
		return std::nullopt;
	return job_.get();
}

StopEvent SessionModel::finish(JobResult result)
{
	std::optional<dbg::StopInfo> stop = std::move(result.stop);
	{
		// A command (not resume()) stops the target inside execute_line:
		// the Session's listener saw it.
		std::lock_guard<std::mutex> lock(stops_->mutex);
		if (stops_->count != stops_seen_ && !stop)
			stop = stops_->last;
		stops_seen_ = stops_->count;
	}
	// A job may leave the target somewhere no stop reported (the tracer
	// drives the Target directly): then the views must still follow RIP.
	if (auto now = session_.pc(); now && (stop ? stop->pc != *now : pc_ != *now)) {
		dbg::StopInfo moved;
		moved.pc = *now;
		stop = moved;
	}
	StopEvent event;
	event.output = std::move(result.output);
	if (result.error) {
		event.output.push_back(result.error->to_string());
		event.error = true;
	}
	event.moved = stop.has_value();
	if (stop) {
		++generation_;
		reason_ = stop->describe(symbolize_);
		pc_ = stop->pc;
	}
	if (session_.state() == dbg::SessionState::Detached)
		state_ = RunState::Disconnected;
	else
		state_ = stop && exited(*stop) ? RunState::Exited : RunState::Stopped;
	event.state = state_;
	event.reason = reason_;
	return event;
}

Result<void> SessionModel::resume(Resume how)
{
	if (busy())
		return make_error("the target is running: Ctrl-C interrupts it");
	if (is_reverse(how) && !runs_backwards())
		return make_error("this target cannot run backwards: a recording can (trace --record -o FILE, "
				  "then vtice serve-replay FILE; docs/replay.md)");
	start([this, how] {
		interrupts::begin_command(-1);
		Result<dbg::StopInfo> stop = make_error("no run");
		switch (how) {
		case Resume::Continue: stop = session_.cont(); break;
		case Resume::StepInto: stop = session_.step_instruction(); break;
		case Resume::StepOver: stop = session_.step_over(); break;
		case Resume::StepOut: stop = session_.step_out(); break;
		case Resume::ReverseContinue: stop = session_.reverse_cont(); break;
		case Resume::ReverseStepInto: stop = session_.reverse_step(); break;
		case Resume::ReverseStepOver: stop = session_.reverse_next(); break;
		case Resume::ReverseStepOut: stop = session_.reverse_finish(); break;
		}
		JobResult result;
		if (stop)
			result.stop = *stop;
		else
			result.error = stop.error();
		return result;
	});
	auto done = collect(kSyncWaitMs);
	if (!done)
		return {};
	StopEvent event = finish(std::move(*done));
	if (event.error)
		return make_error(event.output.back());
	return {};
}

std::optional<StopEvent> SessionModel::poll(int timeout_ms)
{
	auto done = collect(timeout_ms);
	if (!done)
		return std::nullopt;
	return finish(std::move(*done));
}

// The running job's wait sends the break-in (debugger/stop_wait.hpp), as
// for Ctrl-C in batch mode; a second press gives up on a deaf stub.
Result<void> SessionModel::interrupt()
{
	if (!busy())
		return make_error("the target is not running");
	interrupts::raise_ctrl_c();
	return {};
}

CommandOutput SessionModel::execute(const std::string &line)
{
	if (busy())
		return {{"the target is running: Ctrl-C interrupts it"}, true, false};
	start([this, line] {
		dbg::StringOutput out;
		dbg::CommandContext context{session_, out};
		auto ran = dbg::execute_line(context, line);
		JobResult result;
		result.output = split_lines(out.text());
		if (!ran)
			result.error = ran.error();
		return result;
	});
	auto done = collect(kSyncWaitMs);
	if (!done)
		return {};  // still running: the output comes with the stop
	StopEvent event = finish(std::move(*done));
	return {std::move(event.output), event.error, state_ == RunState::Disconnected};
}

std::vector<std::string> SessionModel::command_names() const
{
	std::vector<std::string> names;
	auto first_word = [](const char *text) {
		std::string word(text);
		return word.substr(0, word.find(' '));
	};
	for (const auto &command : dbg::command_table()) {
		names.push_back(first_word(command.name));
		for (const char *alias : command.aliases)
			names.push_back(first_word(alias));
	}
	return names;
}

int run_interactive(dbg::Session &session, const dbg::StopInfo &attached, const std::string &intro,
		    const std::string &graph)
{
	int status;
	{
		// The model's destructor stops a running job before we detach.
		SessionModel model(session, attached);
		status = run_tui(model, split_lines(intro), graph);
	}
	if (interrupts::end_signal())
		interrupts::begin_cleanup();
	if (session.state() != dbg::SessionState::Detached) {
		// Like leaving gdb on a kernel: remove our breakpoints and let it run.
		if (auto detached = session.detach(); !detached)
			std::fprintf(stderr, "vtice attach: detach: %s\n",
				     escape_text(detached.error().to_string()).c_str());
	}
	return interrupts::end_signal() ? 128 + interrupts::end_signal() : status;
}

}  // namespace vtice::tui
