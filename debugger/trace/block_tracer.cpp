#include "block_tracer.hpp"
#include "step_recorder.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vtice::dbg {

namespace {

// THREAD_SIZE on x86-64 (4 KiB pages, no KASAN): PAGE_SIZE << 2.
constexpr std::uint64_t kThreadSize = 16384;
constexpr std::uint64_t kPage = 4096;
constexpr std::size_t kMaxBreakpoints = 128;

bool stops_block(const Instruction &insn)
{
	return insn.branch != BranchKind::None;
}

}  // namespace

BlockTracer::BlockTracer(Session &session, TraceOptions options)
	: session_(session), target_(session.target()), options_(std::move(options))
{
	rip_ = target_.layout().find("rip");
	rsp_ = target_.layout().find("rsp");
}

BlockTracer::~BlockTracer()
{
	if (cr8_ && saved_tpr_)
		(void)target_.write_register(*cr8_, *saved_tpr_);
	// A removal still queued never reached the stub; a queued insertion
	// did not either, and its removal below is refused harmlessly.
	for (const BreakpointChange &change : pending_changes_)
		if (!change.insert)
			(void)target_.remove_breakpoint(change.type, change.address, change.kind);
	for (std::uint64_t address : inserted_)
		(void)target_.remove_breakpoint(BreakKind::Software, address, 1);
	for (int id : disabled_user_breakpoints_)
		(void)session_.enable_breakpoint(id, true);
	session_.invalidate_registers();
}

Result<std::span<const std::uint8_t>> BlockTracer::code_at(std::uint64_t address)
{
	// Two consecutive pages, so an instruction may straddle the boundary.
	std::uint64_t page = address & ~(kPage - 1);
	for (std::uint64_t p : {page, page + kPage}) {
		if (result_.code.count(p))
			continue;
		auto bytes = session_.read_memory(p, kPage);
		if (!bytes) {
			if (p == page)
				return bytes.error();
			continue;
		}
		result_.code[p] = std::move(*bytes);
	}
	static thread_local std::vector<std::uint8_t> joined;
	joined = result_.code[page];
	if (auto next = result_.code.find(page + kPage); next != result_.code.end())
		joined.insert(joined.end(), next->second.begin(), next->second.begin() + 16);
	std::size_t offset = address - page;
	return std::span<const std::uint8_t>(joined.data() + offset, joined.size() - offset);
}

Result<BlockTracer::Block> BlockTracer::decode_block(std::uint64_t pc)
{
	if (auto it = blocks_.find(pc); it != blocks_.end())
		return it->second;
	Block block;
	std::uint64_t at = pc;
	std::set<std::uint64_t> targets;
	for (int guard = 0; guard < 4096; guard++) {
		auto code = code_at(at);
		if (!code)
			return code.error();
		auto insn = session_.disassembler().decode(*code, at);
		if (!insn)
			return make_error("trace: cannot decode the instruction at " + format_address(at, session_.symbolizer()) +
					  ": " + insn.error().message);
		block.instructions++;
		bool direct = !insn->indirect && insn->target &&
			      (insn->branch == BranchKind::Call || insn->branch == BranchKind::Jmp);
		// Follow direct branches, but not around a loop of them.
		if (direct && block.passed.size() < 64 && targets.insert(*insn->target).second) {
			block.passed.push_back({at, *insn->target, block.instructions});
			at = *insn->target;
			continue;
		}
		if (stops_block(*insn)) {
			block.branch = at;
			block.insn = *insn;
			blocks_[pc] = block;
			return block;
		}
		at = insn->next();
	}
	return make_error("trace: no branch within 4096 instructions");
}

Result<std::uint64_t> BlockTracer::read_reg(const RegisterInfo *reg)
{
	return target_.read_register(*reg);
}

Result<std::pair<std::uint64_t, std::uint64_t>> BlockTracer::read_pc_sp()
{
	// One 'g' round trip instead of two 'p's.
	auto regs = target_.read_registers();
	if (!regs)
		return regs.error();
	auto pc = regs->get(*rip_);
	auto sp = regs->get(*rsp_);
	if (!pc || !sp)
		return make_error("trace: rip/rsp missing from the register block");
	return std::make_pair(*pc, *sp);
}

Result<void> BlockTracer::resume_and_wait(ResumeAction action)
{
	auto resumed = target_.resume_with(pending_changes_, action);
	pending_changes_.clear();
	if (!resumed)
		return resumed;
	auto stop = target_.wait_stop(options_.stop_timeout_ms);
	if (!stop)
		return stop.error();
	if (!*stop)
		return make_error("trace: the target did not stop within " + std::to_string(options_.stop_timeout_ms) + " ms");
	if ((*stop)->reason == StopReason::Exited || (*stop)->reason == StopReason::Terminated)
		return make_error("trace: the target exited");
	if (action == ResumeAction::Step)
		result_.steps++;
	else
		result_.continues++;
	return {};
}

void BlockTracer::ensure_breakpoint(std::uint64_t address)
{
	if (inserted_.count(address))
		return;
	// Breakpoints stay for the next time the block runs, but QEMU checks
	// every one at each translated-block entry, so only the newest stay.
	if (insertion_order_.size() >= kMaxBreakpoints) {
		std::uint64_t oldest = insertion_order_.front();
		insertion_order_.pop_front();
		inserted_.erase(oldest);
		pending_changes_.push_back({false, BreakKind::Software, oldest, 1});
	}
	pending_changes_.push_back({true, BreakKind::Software, address, 1});
	inserted_.insert(address);
	insertion_order_.push_back(address);
}

// Runs to `first` or `second` (which may be the same) on this task's stack
// and says which was reached; anything else stopping us is an interrupt, an
// exception or another task, which runs on untraced.
Result<std::uint64_t> BlockTracer::run_to(std::uint64_t first, std::uint64_t second)
{
	ensure_breakpoint(first);
	ensure_breakpoint(second);
	bool interrupted = false;
	for (;;) {
		if (auto r = resume_and_wait(ResumeAction::Continue); !r)
			return r.error();
		auto regs = read_pc_sp();
		if (!regs)
			return regs.error();
		auto [pc, sp] = *regs;
		if ((pc == first || pc == second) && (sp & ~(kThreadSize - 1)) == stack_base_) {
			if (interrupted)
				result_.interruptions++;
			return pc;
		}
		result_.foreign_stops++;
		interrupted = true;
		// QEMU re-reports a breakpoint we stand on: step off it first.
		if (inserted_.count(pc))
			if (auto r = resume_and_wait(ResumeAction::Step); !r)
				return r.error();
	}
}

void BlockTracer::lift_breakpoint(std::uint64_t address)
{
	if (!inserted_.count(address))
		return;
	pending_changes_.push_back({false, BreakKind::Software, address, 1});
	inserted_.erase(address);
	for (auto it = insertion_order_.begin(); it != insertion_order_.end(); ++it)
		if (*it == address) {
			insertion_order_.erase(it);
			break;
		}
}

// A conditional branch whose two successors end at different branches is
// not stepped: with the breakpoint under us lifted, the target runs to
// whichever successor end comes first, and that says which way it went.
// Nothing when the shortcut does not apply (then the branch is stepped).
Result<std::optional<std::uint64_t>> BlockTracer::run_through_jcc(const Block &block)
{
	const Instruction &insn = block.insn;
	if (insn.branch != BranchKind::Jcc || insn.indirect || !insn.target)
		return std::optional<std::uint64_t>();
	auto taken = decode_block(*insn.target);
	auto fallthrough = decode_block(insn.next());
	if (!taken || !fallthrough)
		return std::optional<std::uint64_t>();
	std::uint64_t end_taken = taken->branch, end_fall = fallthrough->branch;
	if (end_taken == end_fall || end_taken == block.branch || end_fall == block.branch)
		return std::optional<std::uint64_t>();
	lift_breakpoint(block.branch);
	auto reached = run_to(end_taken, end_fall);
	if (!reached)
		return reached.error();
	return std::optional<std::uint64_t>(*reached == end_taken ? *insn.target : insn.next());
}

void BlockTracer::record(std::uint64_t from, std::uint64_t to, std::uint32_t flags)
{
	vtice_record r{};
	r.type = VTICE_REC_BRANCH;
	r.cpu = static_cast<std::uint16_t>(cpu_);
	r.flags = flags;
	r.tsc = result_.instructions;
	r.u.branch.from = from;
	r.u.branch.to = to;
	result_.records.push_back(r);
}

// Single-steps the branch ending a block; returns where it went, read
// back. With an interrupt pending, QEMU's gdbstub may answer a step
// without running the instruction (Session::raw_step): RIP still on the
// branch, the step is sent again, Session::kStepRetries times at most.
// Taking a direct branch's target on trust instead made such a step a
// branch that never ran: every return after it closed the wrong frame
// (qemu.tui once saw kmem_cache_alloc "return" before its last call).
Result<std::uint64_t> BlockTracer::step_branch(const Block &block)
{
	for (int attempt = 0;; attempt++) {
		if (auto r = resume_and_wait(ResumeAction::Step); !r)
			return r.error();
		auto pc = read_reg(rip_);
		if (!pc || *pc != block.branch || attempt == Session::kStepRetries)
			return pc;
	}
}

// Raises the task priority (CR8) to 15 so that external interrupts stay
// pending while the task runs between breakpoints, as they do under QEMU's
// single-step: otherwise timer ticks during the runs preempt the task and
// the trace fills with interrupt and scheduler code. Linux does not use
// CR8, so the traced code cannot tell; the old value returns at the end.
Result<void> BlockTracer::hold_interrupts()
{
	cr8_ = target_.layout().find("cr8");
	if (!cr8_ || options_.single_step)
		return {};
	auto tpr = target_.read_register(*cr8_);
	if (!tpr)
		return {};  // stub without CR8: interrupts are then skipped as foreign stops
	if (auto r = target_.write_register(*cr8_, 15); !r)
		return {};
	saved_tpr_ = *tpr;
	return {};
}

// Where the running function returns to: the caller's frame from the
// unwinder, or, at a function's first instruction, the word at rsp.
Result<void> BlockTracer::find_caller(std::uint64_t pc, std::uint64_t sp)
{
	auto frames = session_.backtrace(2);
	if (frames && frames->size() >= 2 && (*frames)[1].reliable) {
		return_address_ = (*frames)[1].pc;
		caller_sp_ = (*frames)[1].sp;
		return {};
	}
	auto sym = session_.symbols() ? session_.symbols()->symbolize(pc) : std::nullopt;
	if (!sym || sym->offset != 0)
		return make_error("trace: cannot tell where this function returns (no unwind data, not at its entry)");
	auto word = session_.read_memory(sp, 8);
	if (!word)
		return word.error();
	std::memcpy(&return_address_, word->data(), 8);
	caller_sp_ = sp + 8;
	return {};
}

// Starting at a function's first instruction, the call that entered it is
// known from the return address: recording it makes the function a proper
// call in the graph rather than a frame "already running".
void BlockTracer::record_entry_call(std::uint64_t pc)
{
	auto sym = session_.symbols() ? session_.symbols()->symbolize(pc) : std::nullopt;
	if (!sym || sym->offset != 0)
		return;
	auto site = find_call_site(session_.disassembler(), return_address_,
				   [this](std::uint64_t at) { return code_at(at); });
	if (site)
		record(*site, pc, VTICE_BRANCH_FROM_STEP);
}

std::optional<std::uint64_t> find_call_site(const Disassembler &disassembler, std::uint64_t return_address,
					    const CodeReader &code_at)
{
	if (return_address < 16)
		return std::nullopt;
	for (unsigned length = 2; length <= 7; length++) {
		std::uint64_t at = return_address - length;
		auto code = code_at(at);
		if (!code)
			return std::nullopt;
		auto insn = disassembler.decode(*code, at);
		if (insn && insn->branch == BranchKind::Call && insn->next() == return_address)
			return at;
	}
	return std::nullopt;
}

// Call/ret counting fails on the kernel's return-stack stuffing (calls that
// never return), so the end is the return address with the stack above the
// traced frame.
Result<bool> BlockTracer::returned(BranchKind kind, std::uint64_t pc)
{
	if (kind != BranchKind::Ret || pc != return_address_)
		return false;
	auto sp = read_reg(rsp_);
	if (!sp)
		return sp.error();
	return *sp >= caller_sp_;
}

Result<TraceResult> BlockTracer::trace_single_steps()
{
	auto pc = read_reg(rip_);
	if (!pc)
		return pc.error();
	std::optional<StepRecorder> recorder;
	if (options_.record) {
		recorder.emplace(target_);
		auto sp = read_reg(rsp_);
		if (!sp)
			return sp.error();
		if (auto r = recorder->begin(*sp, stack_base_ + kThreadSize); !r)
			return r.error();
	}
	while (result_.instructions < options_.max_instructions) {
		auto code = code_at(*pc);
		if (!code)
			return code.error();
		auto insn = session_.disassembler().decode(*code, *pc);
		if (!insn)
			return make_error("trace: cannot decode at " + format_address(*pc, session_.symbolizer()));
		if (recorder)
			if (auto r = recorder->before_step(*insn); !r)
				return r.error();
		if (auto r = resume_and_wait(ResumeAction::Step); !r)
			return r.error();
		if (recorder)
			if (auto r = recorder->after_step(*insn); !r)
				return r.error();
		// The recorder read every register after the step already.
		auto next = recorder ? Result<std::uint64_t>(recorder->pc()) : read_reg(rip_);
		if (!next)
			return next.error();
		// A rep-prefixed string instruction steps once per iteration: it
		// retires as one instruction when pc moves on.
		if (*next == *pc)
			continue;
		result_.instructions++;
		if (options_.progress && result_.instructions % 1024 == 0)
			options_.progress(result_.instructions, result_.branches);
		if (insn->is_branch())
			result_.branches++;
		if (*next != insn->next())
			record(*pc, *next, VTICE_BRANCH_FROM_STEP);
		pc = next;
		auto done = returned(insn->branch, *pc);
		if (!done)
			return done.error();
		if (*done) {
			result_.returned = true;
			break;
		}
	}
	result_.end_pc = *pc;
	if (recorder) {
		result_.recorded_bytes = recorder->bytes();
		result_.unrecorded = recorder->unreadable();
		result_.recording = recorder->take();
	}
	return result_;
}

// The block-stepping loop. `standing` says the last run already stopped at
// the branch ending the block that starts at `at`.
Result<TraceResult> BlockTracer::trace_blocks(std::uint64_t at)
{
	bool standing = false;
	while (result_.instructions < options_.max_instructions) {
		auto block = decode_block(at);
		if (!block)
			return block.error();
		if (!standing && block->branch != at)
			if (auto r = run_to(block->branch, block->branch); !r)
				return r.error();
		std::uint64_t before = result_.instructions;
		for (const Passed &p : block->passed) {
			result_.instructions = before + p.instructions;
			result_.branches++;
			record(p.from, p.to, VTICE_BRANCH_FROM_STEP);
		}
		result_.instructions = before + block->instructions;
		result_.branches++;
		auto shortcut = run_through_jcc(*block);
		if (!shortcut)
			return shortcut.error();
		standing = shortcut->has_value();
		std::uint64_t next;
		if (standing) {
			next = **shortcut;
		} else {
			auto stepped = step_branch(*block);
			if (!stepped)
				return stepped.error();
			next = *stepped;
		}
		if (next != block->insn.next())
			record(block->branch, next, VTICE_BRANCH_FROM_STEP);
		at = next;
		if (options_.progress && result_.branches % 256 == 0)
			options_.progress(result_.instructions, result_.branches);
		auto done = returned(block->insn.branch, at);
		if (!done)
			return done.error();
		if (*done) {
			result_.returned = true;
			result_.end_pc = at;
			return result_;
		}
	}
	return make_error("trace: instruction limit (" + std::to_string(options_.max_instructions) + ") reached");
}

Result<TraceResult> BlockTracer::trace_until_return()
{
	if (!rip_ || !rsp_)
		return make_error("trace: the target has no rip/rsp registers");
	if (session_.state() != SessionState::Stopped)
		return make_error("trace: the target is not stopped");
	auto start = std::chrono::steady_clock::now();
	auto pc = read_reg(rip_);
	auto sp = read_reg(rsp_);
	if (!pc || !sp)
		return make_error("trace: cannot read rip/rsp");
	stack_base_ = *sp & ~(kThreadSize - 1);
	if (auto r = find_caller(*pc, *sp); !r)
		return r.error();
	record_entry_call(*pc);
	cpu_ = std::max(0, target_.selected_thread() - 1);
	result_.start_pc = *pc;
	// User breakpoints would stop the trace in the middle; they come back after.
	for (const auto &bp : session_.breakpoints())
		if (bp.enabled) {
			disabled_user_breakpoints_.push_back(bp.id);
			(void)session_.enable_breakpoint(bp.id, false);
		}
	session_.invalidate_registers();
	if (auto r = hold_interrupts(); !r)
		return r.error();
	Result<TraceResult> out = make_error("");
	if (options_.single_step) {
		out = trace_single_steps();
	} else {
		out = trace_blocks(*pc);
	}
	result_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	if (out)
		out->seconds = result_.seconds;
	return out;
}

}  // namespace vtice::dbg
