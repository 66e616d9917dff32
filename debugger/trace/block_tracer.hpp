// Software branch tracing over RSP: block stepping.
//
// From the current stop, each basic block is decoded with the disassembler,
// the target runs (continue) to the block's final branch, where a breakpoint
// waits, and only that branch is single-stepped; its (from, to) becomes a
// vtice_record. Straight-line code never costs a step. The trace ends when
// the function that was running at the start returns.
//
// Staying with the task: a stop whose stack is not this task's kernel stack
// (rsp & ~(THREAD_SIZE - 1)), or that is not the expected branch, is an
// interrupt or another task; it is counted, left untraced, and the target
// runs on until the task is back at the expected branch.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../session.hpp"
#include "recording.hpp"
#include "vtice/records.h"

namespace vtice::dbg {

struct TraceOptions {
	bool single_step = false;        // the floor: step every instruction (for comparison)
	bool record = false;             // with single_step: keep what each step changed (replay)
	std::uint64_t max_instructions = 5'000'000;
	int stop_timeout_ms = 10000;
	std::function<void(std::uint64_t instructions, std::uint64_t branches)> progress;
	// The stub tracer's reading of the text its records ran through, in bytes.
	std::function<void(std::uint64_t done, std::uint64_t total)> code_progress;
};

struct TraceResult {
	std::vector<vtice_record> records;   // taken branches, tsc = instructions retired so far
	std::map<std::uint64_t, std::vector<std::uint8_t>> code;  // text pages read (for the trace file)
	std::uint64_t instructions = 0;      // executed, by decoding each block
	std::uint64_t branches = 0;          // branch instructions executed (taken or not)
	std::uint64_t steps = 0;             // single-steps issued
	std::uint64_t continues = 0;         // run-to-breakpoint rounds
	std::uint64_t foreign_stops = 0;     // stops in interrupts or other tasks, skipped
	std::uint64_t interruptions = 0;     // times the task was interrupted while traced
	std::uint64_t start_pc = 0, end_pc = 0;
	double seconds = 0;
	bool returned = false;               // the traced function returned
	bool tsc_clock = false;              // record tsc is the TSC, not instructions retired
	std::uint64_t migrations = 0;        // the task moved to another CPU (stub tracer)
	std::optional<replay::Recording> recording;  // TraceOptions::record
	std::uint64_t recorded_bytes = 0;    // registers and memory the recording keeps
	std::uint64_t unrecorded = 0;        // accesses whose bytes the stub would not show
};

// Where the call that returns to return_address starts: the 2 to 7 bytes
// before it that decode as a call ending exactly there; nothing when none
// does. code_at gives the bytes from an address on.
using CodeReader = std::function<Result<std::span<const std::uint8_t>>(std::uint64_t address)>;
std::optional<std::uint64_t> find_call_site(const Disassembler &disassembler, std::uint64_t return_address,
					    const CodeReader &code_at);

class BlockTracer {
public:
	BlockTracer(Session &session, TraceOptions options);
	~BlockTracer();

	// Traces from the current stop until the running function returns.
	Result<TraceResult> trace_until_return();

private:
	// A superblock: straight-line code, continued through direct calls and
	// jumps (their targets are known, so nothing needs to stop there), up to
	// the first branch whose outcome only the run can tell.
	struct Passed {
		std::uint64_t from, to;
		std::uint32_t instructions;  // executed up to and including this branch
	};
	struct Block {
		std::uint64_t branch = 0;        // address of the branch ending the block
		std::uint32_t instructions = 0;  // including the branch
		Instruction insn;                // the branch
		std::vector<Passed> passed;      // direct branches crossed on the way
	};
	Result<Block> decode_block(std::uint64_t pc);
	Result<std::span<const std::uint8_t>> code_at(std::uint64_t address);
	Result<std::uint64_t> read_reg(const RegisterInfo *reg);
	Result<std::pair<std::uint64_t, std::uint64_t>> read_pc_sp();
	Result<std::uint64_t> run_to(std::uint64_t first, std::uint64_t second);
	void lift_breakpoint(std::uint64_t address);
	Result<std::optional<std::uint64_t>> run_through_jcc(const Block &block);
	Result<TraceResult> trace_blocks(std::uint64_t at);
	Result<void> resume_and_wait(ResumeAction action);
	Result<std::uint64_t> step_branch(const Block &block);
	void ensure_breakpoint(std::uint64_t address);
	void record(std::uint64_t from, std::uint64_t to, std::uint32_t flags);
	Result<TraceResult> trace_single_steps();
	Result<void> find_caller(std::uint64_t pc, std::uint64_t sp);
	Result<bool> returned(BranchKind kind, std::uint64_t pc);
	Result<void> hold_interrupts();
	void record_entry_call(std::uint64_t pc);

	Session &session_;
	Target &target_;
	TraceOptions options_;
	TraceResult result_;
	const RegisterInfo *rip_ = nullptr, *rsp_ = nullptr;
	std::uint64_t stack_base_ = 0;
	std::uint64_t return_address_ = 0, caller_sp_ = 0;
	const RegisterInfo *cr8_ = nullptr;
	std::optional<std::uint64_t> saved_tpr_;
	std::map<std::uint64_t, Block> blocks_;
	std::set<std::uint64_t> inserted_;
	std::deque<std::uint64_t> insertion_order_;
	// Breakpoint changes made since the last resume, sent with the next one
	// (Target::resume_with): inserted_ already shows their outcome.
	std::vector<BreakpointChange> pending_changes_;
	std::vector<int> disabled_user_breakpoints_;
	int cpu_ = 0;
};

}  // namespace vtice::dbg
