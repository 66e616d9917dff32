#include "stop_wait.hpp"

#include "vtice/interrupts.hpp"

namespace vtice::dbg {

StopWait::StopWait(int timeout_ms, bool break_in_now) : timeout_ms_(timeout_ms), break_in_now_(break_in_now) {}

StopWait::Next StopWait::give_up(std::string why)
{
	why_ = std::move(why);
	return Next::GiveUp;
}

StopWait::Next StopWait::next()
{
	auto now = Clock::now();
	if (interrupts::in_cleanup() && interrupts::abandon_reason())
		return give_up("the stub did not stop before " + *interrupts::abandon_reason());
	if (!break_in_sent_ && (break_in_now_ || interrupts::ctrl_c_pending() || interrupts::end_signal())) {
		interrupts::mark_ctrl_c_handled();
		break_in_sent_ = now;
		return Next::BreakIn;
	}
	if (break_in_sent_) {
		auto since = std::chrono::duration_cast<std::chrono::milliseconds>(now - *break_in_sent_).count();
		if (interrupts::end_signal() && since >= kBreakInGraceMs)
			return give_up("the stub did not stop within " + std::to_string(kBreakInGraceMs) +
				       " ms of the break-in");
		if (interrupts::ctrl_c_pending()) {
			interrupts::mark_ctrl_c_handled();
			return give_up("Ctrl-C again while the stub had not answered the break-in");
		}
	}
	auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - start_).count();
	if (timeout_ms_ >= 0 && waited >= timeout_ms_) {
		why_ = "the target did not stop within " + std::to_string(timeout_ms_) + " ms";
		return Next::TimedOut;
	}
	if (interrupts::command_timed_out()) {
		why_ = "the target did not stop within the command's time limit (--timeout)";
		return Next::TimedOut;
	}
	return Next::Wait;
}

}  // namespace vtice::dbg
