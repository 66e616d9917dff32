// What the user asked for by signal, read by every wait in vtice.
//
// Ctrl-C (SIGINT) stops the current command, as in gdb; SIGTERM and SIGHUP
// end the run: the command stops, the session cleans up within a short
// budget, and vtice exits with 128+N. The handlers only set flags; each wait
// looks at them at least every kWaitSliceMs, so no wait outlives a signal
// (docs/hardening.md). The TUI's Ctrl-C key raises the same flag.
//
// Three scopes bound waits: the run (an ending signal), one command (Ctrl-C
// since it began, and its deadline) and the cleanup at the end (its budget,
// during which the ending signal itself no longer cuts waits short).
#pragma once

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <string>
#include <cstring>
#include <time.h>
#include <unistd.h>

namespace vtice::interrupts {

// The longest a wait may go without looking at the flags.
constexpr int kWaitSliceMs = 100;
// How long a reply may be awaited before Ctrl-C gives up on it: a healthy
// stub answers well within this even over a serial line, so a Ctrl-C that
// lands in a quick exchange lets it finish and stops the command at its
// next step (a chain of continues ends "Interrupted at"), while one that
// lands in a reply that does not come gives the reply up.
constexpr int kCtrlCPatienceMs = 250;
// How long the end of a run may spend detaching before it gives up.
constexpr int kCleanupBudgetMs = 1500;

using Clock = std::chrono::steady_clock;

namespace detail {
inline std::atomic<unsigned> ctrl_c{0};
inline std::atomic<int> end_signal{0};
inline std::atomic<unsigned> end_signals{0};
// When the first ending signal came (CLOCK_MONOTONIC, ns): the cleanup's
// budget counts from there, so the whole end takes no more than it.
inline std::atomic<long long> end_signal_ns{0};
struct CommandScope {
	unsigned ctrl_c_at_start = 0;
	unsigned ctrl_c_handled = 0;	// Ctrl-C up to this count was acted upon
	std::optional<Clock::time_point> deadline;
	int timeout_ms = -1;
};
inline CommandScope command;
inline std::optional<Clock::time_point> cleanup_deadline;

inline void on_signal(int signal)
{
	if (signal == SIGINT) {
		ctrl_c.fetch_add(1);
		return;
	}
	int none = 0;
	if (end_signal.compare_exchange_strong(none, signal)) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);	// async-signal-safe
		end_signal_ns = now.tv_sec * 1000000000ll + now.tv_nsec;
	}
	// A third ending signal means the cleanup itself is stuck: leave now.
	if (end_signals.fetch_add(1) >= 2)
		std::_Exit(128 + signal);
}
}  // namespace detail

// Temporary outputs (vtice/write_output.hpp) that a signal must not leave
// behind: unlink() is async-signal-safe, so the exit handler removes them.
namespace detail {
constexpr int kMaxTemps = 4;
constexpr std::size_t kMaxTempPath = 4096;
inline char temp_paths[kMaxTemps][kMaxTempPath];
inline std::atomic<bool> temp_used[kMaxTemps];

inline void exit_on_signal(int signal)
{
	for (int i = 0; i < kMaxTemps; i++)
		if (temp_used[i].load())
			unlink(temp_paths[i]);
	const char *text = signal == SIGINT ? "vtice: interrupted (SIGINT)\n"
			   : signal == SIGHUP ? "vtice: stopped by SIGHUP\n"
					      : "vtice: stopped by SIGTERM\n";
	ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));	// async-signal-safe
	(void)ignored;
	_exit(128 + signal);
}
}  // namespace detail

// A slot for a temporary file's path (-1 when none is free or it is too long).
inline int register_temp(const std::string &path)
{
	if (path.size() >= detail::kMaxTempPath)
		return -1;
	for (int i = 0; i < detail::kMaxTemps; i++) {
		bool expected = false;
		if (detail::temp_used[i].compare_exchange_strong(expected, true)) {
			// Marked used while the path is written: a signal now may
			// unlink a half-written name, which names nothing of ours.
			std::memcpy(detail::temp_paths[i], path.c_str(), path.size() + 1);
			return i;
		}
	}
	return -1;
}

inline void unregister_temp(int slot)
{
	if (slot >= 0 && slot < detail::kMaxTemps)
		detail::temp_used[slot] = false;
}

// For commands that do one thing and write at most a file (syms, report,
// version, hv): SIGINT, SIGTERM and SIGHUP end the process at once with
// 128+N, leaving no temporary file and any old output as it was.
inline void install_exit_on_signal()
{
	struct sigaction action {};
	action.sa_handler = detail::exit_on_signal;
	sigemptyset(&action.sa_mask);
	for (int signal : {SIGINT, SIGTERM, SIGHUP})
		sigaction(signal, &action, nullptr);
}

// For commands that wait on a target or a device (attach, trace, hv
// break): SIGINT, SIGTERM and SIGHUP set flags; none restarts a system
// call, so a blocking read of the next command returns at once.
inline void install()
{
	struct sigaction action {};
	action.sa_handler = detail::on_signal;
	sigemptyset(&action.sa_mask);
	for (int signal : {SIGINT, SIGTERM, SIGHUP})
		sigaction(signal, &action, nullptr);
}

// The TUI's Ctrl-C key: the same as the signal.
inline void raise_ctrl_c()
{
	detail::ctrl_c.fetch_add(1);
}

inline unsigned ctrl_c_count()
{
	return detail::ctrl_c.load();
}

// SIGTERM or SIGHUP once received, else 0.
inline int end_signal()
{
	return detail::end_signal.load();
}

inline const char *signal_name(int signal)
{
	switch (signal) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	default: return "a signal";
	}
}

// A command begins: Ctrl-C counts from now, and every wait in it ends by
// timeout_ms from now (< 0: no deadline).
inline void begin_command(int timeout_ms)
{
	detail::command.ctrl_c_at_start = ctrl_c_count();
	detail::command.ctrl_c_handled = detail::command.ctrl_c_at_start;
	detail::command.timeout_ms = timeout_ms;
	detail::command.deadline.reset();
	if (timeout_ms >= 0)
		detail::command.deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
}

// Ctrl-C came during this command (it stays so until the next begins):
// chains of automatic continues end on it.
inline bool command_interrupted()
{
	return ctrl_c_count() != detail::command.ctrl_c_at_start;
}

// A Ctrl-C that nothing acted upon yet: the wait that sees it acts (a
// break-in, or giving up a reply) and marks it handled, so that what the
// command does next (reading the registers of the stop) is not cut short.
inline bool ctrl_c_pending()
{
	return ctrl_c_count() != detail::command.ctrl_c_handled;
}

inline void mark_ctrl_c_handled()
{
	detail::command.ctrl_c_handled = ctrl_c_count();
}

inline bool command_timed_out()
{
	return detail::command.deadline && Clock::now() >= *detail::command.deadline;
}

// Milliseconds left of the command's deadline, or -1 without one.
inline int command_ms_left()
{
	if (!detail::command.deadline)
		return -1;
	auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*detail::command.deadline - Clock::now());
	return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// The run is ending: what is left is to clean up, within budget_ms of the
// ending signal (or of now, without one). No command's limits apply.
inline void begin_cleanup(int budget_ms = kCleanupBudgetMs)
{
	auto start = Clock::now();
	if (long long ns = detail::end_signal_ns.load()) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long since = now.tv_sec * 1000000000ll + now.tv_nsec - ns;
		start -= std::chrono::nanoseconds(since > 0 ? since : 0);
	}
	detail::cleanup_deadline = start + std::chrono::milliseconds(budget_ms);
	begin_command(-1);
}

// The session ends without a signal: no command's limits apply to it.
inline void end_command()
{
	begin_command(-1);
}

inline bool in_cleanup()
{
	return detail::cleanup_deadline.has_value();
}

// Why a wait for a reply, waited_ms long so far, must give up now, or
// nothing. A pending Ctrl-C it reports is handled by that.
inline std::optional<std::string> abandon_reason(long waited_ms = kCtrlCPatienceMs)
{
	if (detail::cleanup_deadline)
		return Clock::now() >= *detail::cleanup_deadline
			       ? std::optional<std::string>("the cleanup's budget of " +
							    std::to_string(kCleanupBudgetMs) + " ms ran out")
			       : std::nullopt;
	if (int signal = end_signal())
		return std::string(signal_name(signal)) + " received";
	if (ctrl_c_pending() && waited_ms >= kCtrlCPatienceMs) {
		mark_ctrl_c_handled();
		return std::string("interrupted (Ctrl-C)");
	}
	if (command_timed_out())
		return "the command's time limit (--timeout) of " + std::to_string(detail::command.timeout_ms) +
		       " ms ran out";
	return std::nullopt;
}

// For tests: back to a run with no signal seen and no scope open.
inline void reset_for_tests()
{
	detail::ctrl_c = 0;
	detail::end_signal = 0;
	detail::end_signals = 0;
	detail::end_signal_ns = 0;
	detail::command = {};
	detail::cleanup_deadline.reset();
}

}  // namespace vtice::interrupts
