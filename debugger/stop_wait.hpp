// How a wait for a running target to stop reacts to the user: what the
// session does after each slice of the wait in which no stop came.
//
// Ctrl-C, or SIGTERM/SIGHUP, sends one break-in (0x03). A stub that ignores
// it is given up: at a second Ctrl-C, or kBreakInGraceMs after the break-in
// when the run is ending, or when the cleanup's budget runs out. The
// caller's timeout and the command's deadline end the wait with the target
// still running.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace vtice::dbg {

class StopWait {
public:
	// How long an ending run waits for the stop its break-in asked for.
	static constexpr int kBreakInGraceMs = 700;

	enum class Next { Wait, BreakIn, GiveUp, TimedOut };

	// timeout_ms < 0: no limit of its own (the command's deadline still
	// applies); break_in_now: the caller wants the target stopped at once.
	StopWait(int timeout_ms, bool break_in_now = false);

	// Called after each slice without a stop.
	Next next();
	// Why the last GiveUp or TimedOut.
	const std::string &why() const { return why_; }

private:
	using Clock = std::chrono::steady_clock;
	Next give_up(std::string why);

	Clock::time_point start_ = Clock::now();
	int timeout_ms_;
	bool break_in_now_;
	std::optional<Clock::time_point> break_in_sent_;
	std::string why_;
};

}  // namespace vtice::dbg
