// Session run control: continue, step, next, finish, with the QEMU quirk
// that continuing from a breakpoint re-reports it (so we step off first).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "hex.hpp"
#include "session.hpp"
#include "stop_wait.hpp"
#include "vtice/interrupts.hpp"

namespace vtice::dbg {

std::string StopInfo::describe(const Symbolizer &symbolize) const
{
	std::string where = format_address(pc, symbolize);
	std::string at = hex(pc) + (where.rfind("0x", 0) == 0 ? "" : " <" + where + ">");
	if (!event.replay_log.empty())  // gdb's words for it
		return "No more reverse-execution history (the recording's " + event.replay_log + ") at " + at;
	switch (event.reason) {
	case StopReason::Breakpoint:
		if (breakpoint)
			return "Breakpoint " + std::to_string(*breakpoint) + " at " + at;
		return "Stopped at breakpoint " + at;
	case StopReason::Watchpoint:
		return std::string(break_kind_name(event.watch_kind.value_or(BreakKind::WriteWatch))) +
		       (breakpoint ? " " + std::to_string(*breakpoint) : "") + " hit (address " +
		       hex(event.watch_address.value_or(0)) + ") at " + at;
	case StopReason::Exited:
		return "Target exited with code " + std::to_string(event.signal);
	case StopReason::Terminated:
		return "Target terminated by signal " + std::to_string(event.signal);
	case StopReason::Signal:
		break;
	}
	if (event.signal == 2)
		return "Interrupted at " + at;
	if (event.signal == 11)  // the vtice stub's crash guards (docs/hypervisor-debugging.md)
		return "Kernel crash (SIGSEGV) at " + at;
	if (event.signal == 14)  // the vtice stub's lockup watch: no timer tick for lockup_secs
		return "Hard lockup (SIGALRM): the CPU's timer could not interrupt it for too long at " + at;
	return "Stopped at " + at;
}

Result<StopInfo> Session::attach()
{
	auto event = target_->query_stop();
	if (!event)
		return event.error();
	return finish_stop(*event);
}

// What leaving needs whether the target then runs or not: stopped, and no
// int3 or watchpoint of ours left behind in the guest.
Result<void> Session::leave_target_clean()
{
	if (state_ == SessionState::Running)
		if (auto stop = wait_and_finish(5000, true); !stop)
			return stop.error();
	for (auto &bp : breakpoints_)
		if (bp.inserted) {
			unsigned kind = bp.spec.type <= BreakKind::Hardware ? 1 : bp.spec.length;
			(void)target_->remove_breakpoint(bp.spec.type, bp.address, kind);
			bp.inserted = false;
		}
	return {};
}

Result<void> Session::detach()
{
	if (auto r = leave_target_clean(); !r)
		return r;
	if (auto r = target_->detach(); !r)
		return r;
	state_ = SessionState::Detached;
	return {};
}

std::string Session::detached_line() const
{
	return is_recording() ? "Detached; breakpoints removed (a recording: nothing runs on)."
			      : "Detached; breakpoints removed, the target runs on.";
}

Result<void> Session::disconnect()
{
	if (auto r = leave_target_clean(); !r)
		return r;
	state_ = SessionState::Detached;
	return {};
}

Result<StopInfo> Session::finish_stop(const StopEvent &event)
{
	state_ = event.reason == StopReason::Exited || event.reason == StopReason::Terminated ?
			 SessionState::Detached : SessionState::Stopped;
	stop_count_++;
	if (registers_valid_)
		previous_registers_ = *registers_;
	registers_valid_ = false;
	StopInfo info;
	info.event = event;
	if (state_ == SessionState::Detached)
		return info;
	auto pc_value = pc();
	if (!pc_value)
		return pc_value.error();
	info.pc = *pc_value;
	if (Breakpoint *bp = breakpoint_at(info.pc); bp && event.signal == 5) {
		info.breakpoint = bp->id;
		info.event.reason = StopReason::Breakpoint;
	}
	if (event.reason == StopReason::Watchpoint && event.watch_address)
		for (const auto &bp : breakpoints_)
			if (bp.spec.type >= BreakKind::WriteWatch && *event.watch_address >= bp.address &&
			    *event.watch_address < bp.address + bp.spec.length)
				info.breakpoint = bp.id;
	return info;
}

// The one wait for a running target: slices of interrupts::kWaitSliceMs,
// after each of which StopWait says whether to send the break-in, keep
// waiting, or stop waiting.
Result<StopInfo> Session::wait_and_finish(int timeout_ms, bool break_in_now)
{
	StopWait wait(timeout_ms, break_in_now);
	for (;;) {
		auto event = target_->wait_stop(interrupts::kWaitSliceMs);
		if (!event)
			return event.error();
		if (*event)
			return finish_stop(**event);
		switch (wait.next()) {
		case StopWait::Next::Wait:
			break;
		case StopWait::Next::BreakIn:
			if (auto r = target_->interrupt(); !r)
				return r.error();
			break;
		case StopWait::Next::TimedOut:
			return make_error(wait.why());
		case StopWait::Next::GiveUp:
			// Nothing more can be asked of a stub that will not stop.
			state_ = SessionState::Detached;
			return make_error(wait.why() + "; gave up the connection (the target may still run with "
						       "breakpoints of ours in it)");
		}
	}
}

// Whether a chain of automatic continues (a false condition, an ignore
// count, a recursive return) must end here, stopped: the user asked, or
// the chain's time is up. The stop is then reported as an interruption.
static std::optional<Error> chain_must_end(StopInfo &stop, std::chrono::steady_clock::time_point deadline,
					   int timeout_ms, std::uint64_t rounds)
{
	if (interrupts::command_interrupted() || interrupts::end_signal()) {
		interrupts::mark_ctrl_c_handled();
		stop.breakpoint.reset();
		stop.event.reason = StopReason::Signal;
		stop.event.signal = 2;
		return std::nullopt;
	}
	if ((timeout_ms >= 0 && std::chrono::steady_clock::now() >= deadline) || interrupts::command_timed_out())
		return make_error("stopped at " + hex(stop.pc) + " after " + std::to_string(rounds) +
				  " automatic continues (breakpoint conditions or ignore counts said to go on): "
				  "the time limit ran out");
	return std::nullopt;
}

static bool ended_by_user(const StopInfo &stop)
{
	return stop.event.reason == StopReason::Signal && stop.event.signal == 2 &&
	       (interrupts::command_interrupted() || interrupts::end_signal());
}

// A step that came back with every register as it was before it: nothing
// ran (finish_stop kept the registers of before in previous_registers_).
bool Session::step_ran_nothing(const StopInfo &stop) const
{
	return stop.event.signal == 5 && registers_valid_ && !previous_registers_.raw.empty() &&
	       registers_->raw == previous_registers_.raw;
}

// QEMU's gdbstub can answer a step without running anything: its single step
// masks interrupts (its default), and with one pending the vCPU may leave
// its loop before the instruction (seen in qemu.tui on a loaded machine: F10
// and F8 stopped at the pc they started from, every register unchanged). Such
// a step is sent again, kStepRetries times at most. An instruction that runs
// changes RIP or another register; one that jumps to itself or waits (jmp $,
// hlt) changes none, and the retries end it.
Result<StopInfo> Session::raw_step()
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	for (int attempt = 0;; attempt++) {
		if (auto r = target_->resume(ResumeAction::Step); !r)
			return r.error();
		state_ = SessionState::Running;
		auto stop = wait_and_finish(kStepTimeoutMs);
		if (!stop || attempt == kStepRetries || !step_ran_nothing(*stop))
			return stop;
	}
}

// One instruction, with the breakpoint under pc (if any) lifted for it:
// QEMU reports a breakpoint at the current pc again instead of running.
Result<StopInfo> Session::step_lifting_breakpoint()
{
	auto where = pc();
	if (!where)
		return where.error();
	Breakpoint *bp = breakpoint_at(*where);
	if (!bp)
		return raw_step();
	int id = bp->id;
	if (auto r = target_->remove_breakpoint(bp->spec.type, bp->address, 1); !r)
		return r.error();
	auto step = raw_step();
	for (auto &b : breakpoints_)
		if (b.id == id) {
			b.inserted = false;
			if (auto r = insert(b); !r)
				return r.error();
		}
	return step;
}

Result<void> Session::step_off_breakpoint()
{
	auto where = pc();
	if (!where)
		return where.error();
	if (!breakpoint_at(*where))
		return {};
	auto step = step_lifting_breakpoint();
	if (!step)
		return step.error();
	return {};
}

// Counts the hit; false when the condition or the ignore count says to keep
// going. As in gdb, a crossing with a false condition is no hit at all, while
// one passed by the ignore count is counted.
Result<bool> Session::should_stop(StopInfo &info)
{
	if (!info.breakpoint)
		return true;
	auto found = find_breakpoint(*info.breakpoint);
	if (!found)
		return true;
	Breakpoint &bp = **found;
	if (!bp.spec.condition.empty()) {
		auto value = evaluate(bp.spec.condition);
		if (!value)
			return make_error("breakpoint " + std::to_string(bp.id) + " condition: " + value.error().message);
		if (!*value)
			return false;
	}
	bp.hits++;
	if (bp.ignore_count > 0) {
		bp.ignore_count--;
		return false;
	}
	info.commands = bp.commands;
	if (bp.spec.temporary)
		(void)delete_breakpoint(bp.id);
	return true;
}

// Backwards the stub moves off the current instruction itself (a replay
// checks breakpoints only after undoing a step), so only a forward run steps
// off the breakpoint it stands on.
Result<StopInfo> Session::continue_once(int timeout_ms, ResumeAction action)
{
	if (action == ResumeAction::Continue)
		if (auto r = step_off_breakpoint(); !r)
			return r.error();
	if (auto r = target_->resume(action); !r)
		return r.error();
	state_ = SessionState::Running;
	return wait_and_finish(timeout_ms);
}

Result<StopInfo> Session::cont(int timeout_ms)
{
	return run_until_stop(timeout_ms, ResumeAction::Continue);
}

Result<StopInfo> Session::reverse_cont(int timeout_ms)
{
	return run_until_stop(timeout_ms, ResumeAction::ReverseContinue);
}

Result<StopInfo> Session::reverse_step()
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	if (auto r = target_->resume(ResumeAction::ReverseStep); !r)
		return r.error();
	state_ = SessionState::Running;
	return wait_and_finish(kStepTimeoutMs);
}

Result<StopInfo> Session::reverse_finish(int timeout_ms)
{
	auto result = run_back_to_call(timeout_ms);
	announce(result);
	return result;
}

// gdb's way: back to this function's entry in this frame (a breakpoint
// there, the stack pointer it had on entry), then one step back onto the
// call. A recursive call of the same function reaches the entry with a
// lower stack pointer and is passed.
Result<StopInfo> Session::run_back_to_call(int timeout_ms)
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	auto here = pc();
	if (!here)
		return here.error();
	auto function = symbols_ ? symbols_->symbolize(*here) : std::nullopt;
	if (!function)
		return make_error("reverse-finish: no symbol for " + hex(*here) + ", so the function's start is unknown");
	auto frames = backtrace(2);
	if (!frames)
		return frames.error();
	if (frames->size() < 2 || !(*frames)[1].reliable)
		return make_error("reverse-finish: cannot find the caller's frame reliably (no unwind data here)");
	std::uint64_t entry = function->start, entry_sp = (*frames)[1].sp - 8;
	bool own = *here != entry && breakpoint_at(entry) == nullptr;
	if (own)
		if (auto r = target_->insert_breakpoint(BreakKind::Software, entry, 1); !r)
			return r.error();
	Result<StopInfo> result = make_error("");
	bool reached = *here == entry;
	while (!reached) {
		result = continue_once(timeout_ms, ResumeAction::ReverseContinue);
		if (!result || ended_by_user(*result) || !result->event.replay_log.empty())
			break;
		auto sp = register_value("rsp");
		reached = result->pc == entry && sp && *sp == entry_sp;
		if (result->pc == entry)
			continue;  // this frame's entry, or a deeper call of the same function
		auto keep = should_stop(*result);
		if (!keep)
			result = keep.error();
		if (!keep || *keep)
			break;
	}
	if (own)
		(void)target_->remove_breakpoint(BreakKind::Software, entry, 1);
	if (reached)
		result = reverse_step();
	return result;
}

// gdb's reverse-nexti: one instruction back, but a call is undone whole.
// Stepping back from the instruction after a call lands on the callee's
// RET; from there, back onto the call: reverse-finish where symbols give
// the callee's start, else step by step until the call that returns here
// (its next instruction is where we began, its stack pointer 8 above the
// RET's, which had the return address on top).
Result<StopInfo> Session::reverse_next(int timeout_ms)
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	auto began = pc();
	if (!began)
		return began.error();
	auto back = reverse_step();
	if (back && back->event.replay_log.empty() && back->event.reason == StopReason::Signal) {
		auto insns = disassemble(back->pc, 1);
		if (insns && insns->front().branch == BranchKind::Ret) {
			auto ret_sp = register_value("rsp");
			if (!ret_sp)
				return ret_sp.error();
			// With symbols the callee's body goes back in one run; a tail
			// call (getname jumps to getname_flags.part.0) leaves the
			// jumping function's steps to the call.
			if (symbols_ && symbols_->symbolize(back->pc))
				back = run_back_to_call(timeout_ms);
			if (back)
				back = reverse_step_to_call(*back, *began, *ret_sp);
		}
	}
	announce(back);
	return back;
}

// Back from `at`, one step at a time, to the call that returned to
// `returned_to`: a call instruction just before it, run with the stack
// pointer 8 above the RET's (which had the return address on top). Ctrl-C
// ends it where it is.
Result<StopInfo> Session::reverse_step_to_call(StopInfo at, std::uint64_t returned_to, std::uint64_t ret_sp)
{
	for (;;) {
		if (!at.event.replay_log.empty() || at.event.reason != StopReason::Signal ||
		    interrupts::command_interrupted())
			return at;
		auto sp = register_value("rsp");
		if (!sp)
			return sp.error();
		if (*sp == ret_sp + 8) {
			auto call = disassemble(at.pc, 1);
			if (call && call->front().branch == BranchKind::Call && call->front().next() == returned_to)
				return at;
		}
		auto back = reverse_step();
		if (!back)
			return back;
		at = std::move(*back);
	}
}

Result<StopInfo> Session::run_until_stop(int timeout_ms, ResumeAction action)
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
	for (std::uint64_t rounds = 0;; rounds++) {
		auto stop = continue_once(timeout_ms, action);
		if (!stop)
			return stop;
		auto keep = should_stop(*stop);
		if (!keep)
			return keep.error();
		if (!*keep)
			if (auto end = chain_must_end(*stop, deadline, timeout_ms, rounds))
				return *end;
		if (*keep || ended_by_user(*stop)) {
			announce(*stop);
			return stop;
		}
	}
}

Result<StopInfo> Session::step_instruction()
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	auto stop = step_lifting_breakpoint();
	announce(stop);
	return stop;
}

// Runs until pc == address with rsp above frame_sp (the frame we wait for
// has returned), or until a user breakpoint stops us first.
Result<StopInfo> Session::run_to(std::uint64_t address, std::uint64_t frame_sp, int timeout_ms)
{
	bool own = breakpoint_at(address) == nullptr;
	if (own)
		if (auto r = target_->insert_breakpoint(BreakKind::Software, address, 1); !r)
			return r.error();
	Result<StopInfo> result = make_error("");
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
	for (std::uint64_t rounds = 0;; rounds++) {
		result = continue_once(timeout_ms, ResumeAction::Continue);
		if (!result || ended_by_user(*result))
			break;
		if (result->pc == address) {
			auto sp = register_value("rsp");
			if (!sp || *sp > frame_sp) {
				result->breakpoint.reset();
				result->event.reason = StopReason::Signal;
				break;
			}
			// A recursive call reached the same address: lift our
			// breakpoint for one step (QEMU would re-report it).
			if (own)
				(void)target_->remove_breakpoint(BreakKind::Software, address, 1);
			auto step = raw_step();
			if (own)
				(void)target_->insert_breakpoint(BreakKind::Software, address, 1);
			if (!step) {
				result = step.error();
				break;
			}
		} else {
			auto keep = should_stop(*result);
			if (!keep) {
				result = keep.error();
				break;
			}
			if (*keep)
				break;
		}
		if (auto end = chain_must_end(*result, deadline, timeout_ms, rounds + 1)) {
			result = *end;
			break;
		}
		if (ended_by_user(*result))
			break;
	}
	if (own)
		(void)target_->remove_breakpoint(BreakKind::Software, address, 1);
	announce(result);
	return result;
}

Result<StopInfo> Session::step_over()
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	auto where = pc();
	if (!where)
		return where.error();
	auto insns = disassemble(*where, 1);
	if (!insns)
		return insns.error();
	const Instruction &insn = insns->front();
	if (insn.branch != BranchKind::Call)
		return step_instruction();
	auto sp = register_value("rsp");
	if (!sp)
		return sp.error();
	// After the call returns rsp is back to its value now.
	return run_to(insn.next(), *sp - 8, -1);
}

Result<StopInfo> Session::step_out(int timeout_ms)
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	auto frames = backtrace(2);
	if (!frames)
		return frames.error();
	if (frames->size() < 2 || !(*frames)[1].reliable)
		return make_error("finish: cannot find the caller's frame reliably (no unwind data here)");
	const Frame &caller = (*frames)[1];
	return run_to(caller.pc, caller.sp - 8, timeout_ms);
}

Result<void> Session::resume()
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	if (auto r = step_off_breakpoint(); !r)
		return r;
	if (auto r = target_->resume(ResumeAction::Continue); !r)
		return r;
	state_ = SessionState::Running;
	return {};
}

Result<std::optional<StopInfo>> Session::poll(int timeout_ms)
{
	if (state_ != SessionState::Running)
		return make_error("the target is not running");
	auto event = target_->wait_stop(timeout_ms);
	if (!event)
		return event.error();
	if (!*event)
		return std::optional<StopInfo>();
	auto stop = finish_stop(**event);
	if (!stop)
		return stop.error();
	auto keep = should_stop(*stop);
	if (!keep)
		return keep.error();
	if (!*keep) {
		if (auto r = resume(); !r)
			return r.error();
		return std::optional<StopInfo>();
	}
	announce(*stop);
	return std::optional<StopInfo>(std::move(*stop));
}

Result<void> Session::interrupt()
{
	return target_->interrupt();
}

}  // namespace vtice::dbg
