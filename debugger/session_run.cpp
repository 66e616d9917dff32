// Session run control: continue, step, next, finish, with the QEMU quirk
// that continuing from a breakpoint re-reports it (so we step off first).
#include <cstdio>
#include <cstring>

#include "hex.hpp"
#include "session.hpp"

namespace vtice::dbg {

std::string StopInfo::describe(const Symbolizer &symbolize) const
{
	std::string where = format_address(pc, symbolize);
	std::string at = hex(pc) + (where.rfind("0x", 0) == 0 ? "" : " <" + where + ">");
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
	if (state_ == SessionState::Running) {
		if (auto r = interrupt(); !r)
			return r;
		if (auto stop = wait_and_finish(5000); !stop)
			return stop.error();
	}
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

Result<StopInfo> Session::wait_and_finish(int timeout_ms)
{
	auto event = target_->wait_stop(timeout_ms);
	if (!event)
		return event.error();
	if (!*event)
		return make_error("the target did not stop within " + std::to_string(timeout_ms) + " ms");
	return finish_stop(**event);
}

Result<StopInfo> Session::raw_step()
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	if (auto r = target_->resume(ResumeAction::Step); !r)
		return r.error();
	state_ = SessionState::Running;
	return wait_and_finish(10000);
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

Result<StopInfo> Session::continue_once(int timeout_ms)
{
	if (auto r = step_off_breakpoint(); !r)
		return r.error();
	if (auto r = target_->resume(ResumeAction::Continue); !r)
		return r.error();
	state_ = SessionState::Running;
	return wait_and_finish(timeout_ms);
}

Result<StopInfo> Session::cont(int timeout_ms)
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	for (;;) {
		auto stop = continue_once(timeout_ms);
		if (!stop)
			return stop;
		auto keep = should_stop(*stop);
		if (!keep)
			return keep.error();
		if (*keep) {
			for (auto &l : listeners_)
				l(*stop);
			return stop;
		}
	}
}

Result<StopInfo> Session::step_instruction()
{
	if (state_ != SessionState::Stopped)
		return make_error("the target is not stopped");
	auto stop = step_lifting_breakpoint();
	if (stop)
		for (auto &l : listeners_)
			l(*stop);
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
	for (;;) {
		result = continue_once(timeout_ms);
		if (!result)
			break;
		if (result->pc == address) {
			auto sp = register_value("rsp");
			if (sp && *sp <= frame_sp) {
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
				continue;
			}
			result->breakpoint.reset();
			result->event.reason = StopReason::Signal;
			break;
		}
		auto keep = should_stop(*result);
		if (!keep) {
			result = keep.error();
			break;
		}
		if (*keep)
			break;
	}
	if (own)
		(void)target_->remove_breakpoint(BreakKind::Software, address, 1);
	if (result)
		for (auto &l : listeners_)
			l(*result);
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
	for (auto &l : listeners_)
		l(*stop);
	return std::optional<StopInfo>(std::move(*stop));
}

Result<void> Session::interrupt()
{
	return target_->interrupt();
}

}  // namespace vtice::dbg
