// The block-stepping branch tracer (debugger/trace/block_tracer.cpp)
// against a target that runs real x86 code: a small CPU of its own that
// executes NOP, JE/JNE rel8, JMP rel8, CALL rel32 and RET, stops at the
// breakpoints it is given, and logs every branch it takes. That log is the
// oracle: the tracer sees only the stops, the registers and the code bytes,
// as over RSP. The target also plays QEMU's two habits the tracer must
// survive: a step that runs nothing (an interrupt pending) and a
// breakpoint hit in an interrupt, on another stack, during a run.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <utility>

#include "session.hpp"
#include "single_thread_target.hpp"
#include "trace/block_tracer.hpp"

using namespace vtice::dbg;
using vtice::make_error;
using vtice::Result;

namespace {

constexpr std::uint64_t kCode = 0xffffffff81000000ull;
constexpr std::uint64_t kF = kCode, kG = kCode + 0x40, kCaller = kCode + 0x100, kReturn = kCaller + 5;
constexpr std::uint64_t kStackTop = 0xffffc90000014000ull, kSp = kStackTop - 0x100;
constexpr std::uint64_t kIrqPc = kCode + 0x800, kIrqSp = 0xffffc90000020f00ull;

// f: nop; je 0x06; nop; jmp 0x07; nop; call g; jne 0x11; ret; nop; nop; nop; ret
// g: nop; ret.  The caller: call f; then jmp to itself.
std::vector<std::uint8_t> program()
{
	std::vector<std::uint8_t> code(0x1000, 0xcc);	// one page: the tracer reads code a page at a time
	const std::uint8_t f[] = {0x90, 0x74, 0x03, 0x90, 0xeb, 0x01, 0x90, 0xe8, 0x34, 0x00, 0x00, 0x00,
				  0x75, 0x03, 0xc3, 0x90, 0x90, 0x90, 0xc3};
	const std::uint8_t g[] = {0x90, 0xc3};
	const std::uint8_t caller[] = {0xe8, 0xfb, 0xfe, 0xff, 0xff, 0xeb, 0xfe};	// call f (-0x105); jmp .
	std::memcpy(&code[kF - kCode], f, sizeof(f));
	std::memcpy(&code[kG - kCode], g, sizeof(g));
	std::memcpy(&code[kCaller - kCode], caller, sizeof(caller));
	return code;
}

class RunningTarget final : public fake::SingleThreadTarget {
public:
	// What the test sets: each JE/JNE's outcome in the order they run, the
	// address whose next step runs nothing, the run that an interrupt stops.
	std::deque<bool> conditions;
	std::set<std::uint64_t> idle_step_at;
	int interrupt_on_run = 0;

	// The oracle: every branch taken (to another place than the next
	// instruction), and every instruction executed.
	std::vector<std::pair<std::uint64_t, std::uint64_t>> taken;
	std::uint64_t executed = 0;

	RunningTarget() : SingleThreadTarget({{"rsp", 64}, {"rip", 64}}), code_(program()) { write_stack(kSp, kReturn); }

	std::string describe() const override { return "running target"; }
	Result<RegisterValues> read_registers() override
	{
		RegisterValues values;
		values.raw.resize(layout_.g_size);
		values.set(layout_.registers[0], sp_);
		values.set(layout_.registers[1], pc_);
		return values;
	}
	Result<std::uint64_t> read_register(const RegisterInfo &reg) override { return reg.number ? pc_ : sp_; }
	Result<void> write_register(const RegisterInfo &, std::uint64_t) override { return make_error("read-only"); }
	Result<std::vector<std::uint8_t>> read_memory(std::uint64_t address, std::size_t length) override
	{
		if (address >= kCode && address + length <= kCode + code_.size())
			return std::vector<std::uint8_t>(code_.begin() + (address - kCode),
							 code_.begin() + (address - kCode + length));
		std::vector<std::uint8_t> bytes;
		for (std::size_t i = 0; i < length; i++) {
			auto byte = stack_.find(address + i);
			if (byte == stack_.end())
				return make_error("cannot read memory at " + std::to_string(address + i));
			bytes.push_back(byte->second);
		}
		return bytes;
	}
	Result<void> write_memory(std::uint64_t, const std::vector<std::uint8_t> &) override
	{
		return make_error("read-only");
	}
	Result<void> set_physical_mode(bool) override { return make_error("no physical mode"); }
	Result<void> insert_breakpoint(BreakKind, std::uint64_t address, unsigned) override
	{
		breakpoints_.insert(address);
		return {};
	}
	Result<void> remove_breakpoint(BreakKind, std::uint64_t address, unsigned) override
	{
		breakpoints_.erase(address);
		return {};
	}

	Result<void> resume(ResumeAction action) override
	{
		if (in_irq_) {	// the interrupt returns first: back on the task's stack where it was
			std::swap(pc_, saved_pc_);
			std::swap(sp_, saved_sp_);
			in_irq_ = false;
		}
		if (action == ResumeAction::Step) {
			if (!idle_step_at.erase(pc_))
				execute();
		} else if (++runs_ == interrupt_on_run) {
			saved_pc_ = pc_;	// a breakpoint in an interrupt handler, on the IRQ stack
			saved_sp_ = sp_;
			pc_ = kIrqPc;
			sp_ = kIrqSp;
			in_irq_ = true;
		} else {
			// As QEMU: a breakpoint under the PC stops the run before it moves.
			for (int n = 0; n < 10000 && !breakpoints_.count(pc_); n++)
				execute();
		}
		stopped_ = true;
		return {};
	}
	Result<std::optional<StopEvent>> wait_stop(int) override
	{
		if (!stopped_)
			return std::optional<StopEvent>();
		stopped_ = false;
		return std::optional<StopEvent>(StopEvent{.signal = 5});
	}
	Result<StopEvent> query_stop() override { return StopEvent{.signal = 5}; }

private:
	std::uint8_t at(std::uint64_t address) const { return code_.at(address - kCode); }
	std::int32_t rel32(std::uint64_t address) const
	{
		std::int32_t v;
		std::memcpy(&v, &code_.at(address - kCode), 4);
		return v;
	}
	void write_stack(std::uint64_t address, std::uint64_t value)
	{
		for (int i = 0; i < 8; i++)
			stack_[address + i] = static_cast<std::uint8_t>(value >> (8 * i));
	}
	std::uint64_t read_stack(std::uint64_t address) const
	{
		std::uint64_t value = 0;
		for (int i = 0; i < 8; i++)
			value |= std::uint64_t{stack_.at(address + i)} << (8 * i);
		return value;
	}

	// One instruction at pc_: the five this code holds, nothing else.
	void execute()
	{
		std::uint64_t pc = pc_, next = pc_;
		switch (at(pc)) {
		case 0x90: next = pc + 1; break;
		case 0x74:
		case 0x75: {
			bool jump = !conditions.empty() && conditions.front();
			if (!conditions.empty())
				conditions.pop_front();
			next = pc + 2 + (jump ? static_cast<std::int8_t>(at(pc + 1)) : 0);
			break;
		}
		case 0xeb: next = pc + 2 + static_cast<std::int8_t>(at(pc + 1)); break;
		case 0xe8:
			sp_ -= 8;
			write_stack(sp_, pc + 5);
			next = pc + 5 + rel32(pc + 1);
			break;
		case 0xc3:
			next = read_stack(sp_);
			sp_ += 8;
			break;
		default: ADD_FAILURE() << "the CPU ran into a byte it does not execute at " << std::hex << pc; return;
		}
		executed++;
		if (next != pc + (at(pc) == 0xe8 ? 5u : at(pc) == 0x90 || at(pc) == 0xc3 ? 1u : 2u))
			taken.emplace_back(pc, next);
		pc_ = next;
	}

	std::vector<std::uint8_t> code_;
	std::map<std::uint64_t, std::uint8_t> stack_;
	std::set<std::uint64_t> breakpoints_;
	std::uint64_t pc_ = kF, sp_ = kSp, saved_pc_ = 0, saved_sp_ = 0;
	bool stopped_ = false, in_irq_ = false;
	int runs_ = 0;
};

struct Traced {
	TraceResult result;
	std::vector<std::pair<std::uint64_t, std::uint64_t>> records;
};

// Stopped at f's first instruction, called from the caller: trace until f returns.
Traced trace(Session &session)
{
	std::vector<SymbolList::Entry> entries = {
		{kF, "f", 'T'}, {kG, "g", 'T'}, {kCaller, "caller", 'T'}, {kCode + 0x200, "_etext", 'T'}};
	session.set_symbols(std::make_unique<SymbolList>(entries, "test"));
	EXPECT_TRUE(session.attach().ok());
	auto result = BlockTracer(session, TraceOptions{}).trace_until_return();
	EXPECT_TRUE(result.ok()) << (result ? "" : result.error().message);
	Traced out;
	if (!result)
		return out;
	out.result = *result;
	for (const vtice_record &r : result->records)
		out.records.emplace_back(r.u.branch.from, r.u.branch.to);
	return out;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> with_entry_call(
	const std::vector<std::pair<std::uint64_t, std::uint64_t>> &taken)
{
	std::vector<std::pair<std::uint64_t, std::uint64_t>> want = {{kCaller, kF}};	// the call that entered f
	want.insert(want.end(), taken.begin(), taken.end());
	return want;
}

}  // namespace

// Both JE/JNE taken: each branch the CPU took is one record, in order,
// the call through which f was entered first; the instructions counted are
// those the CPU executed; the trace ends at f's return to the caller.
TEST(BlockTracer, RecordsEveryBranchTheCpuTookAndEndsAtTheReturn)
{
	auto owned = std::make_unique<RunningTarget>();
	RunningTarget *cpu = owned.get();
	cpu->conditions = {true, true};
	Session session(std::move(owned));
	Traced t = trace(session);
	ASSERT_EQ(cpu->taken.size(), 5u) << "je, call g, g's ret, jne, f's ret";
	EXPECT_EQ(t.records, with_entry_call(cpu->taken));
	EXPECT_EQ(t.result.instructions, cpu->executed);
	EXPECT_TRUE(t.result.returned);
	EXPECT_EQ(t.result.end_pc, kReturn);
	EXPECT_LT(t.result.steps, cpu->executed) << "straight-line code and the jne's shortcut cost no step";
}

// Neither taken: the other path (JMP passed on the way to the call) and
// the other RET.
TEST(BlockTracer, FollowsTheFallThroughPaths)
{
	auto owned = std::make_unique<RunningTarget>();
	RunningTarget *cpu = owned.get();
	cpu->conditions = {false, false};
	Session session(std::move(owned));
	Traced t = trace(session);
	ASSERT_EQ(cpu->taken.size(), 4u) << "jmp, call g, g's ret, f's ret";
	EXPECT_EQ(t.records, with_entry_call(cpu->taken));
	EXPECT_EQ(t.result.instructions, cpu->executed);
	EXPECT_TRUE(t.result.returned);
}

// A step that runs nothing (QEMU's answer with an interrupt pending) at
// g's RET: the tracer reads RIP back, sees it still on the branch and
// steps again; taking the step as done would record a branch from the RET
// to itself and lose the return (d1b3d64).
TEST(BlockTracer, StepsABranchAgainWhenAStepRanNothing)
{
	auto owned = std::make_unique<RunningTarget>();
	RunningTarget *cpu = owned.get();
	cpu->conditions = {true, true};
	cpu->idle_step_at = {kG + 1};
	Session session(std::move(owned));
	Traced t = trace(session);
	EXPECT_TRUE(cpu->idle_step_at.empty()) << "the idle step was taken";
	EXPECT_EQ(t.records, with_entry_call(cpu->taken));
	EXPECT_TRUE(t.result.returned);
}

// A run that stops in an interrupt handler (another PC, the IRQ stack) is
// not the task: counted as a foreign stop, left untraced, and the run goes
// on to the branch it was waiting for.
TEST(BlockTracer, AStopInAnInterruptIsSkipped)
{
	auto owned = std::make_unique<RunningTarget>();
	RunningTarget *cpu = owned.get();
	cpu->conditions = {true, true};
	cpu->interrupt_on_run = 1;
	Session session(std::move(owned));
	Traced t = trace(session);
	EXPECT_EQ(t.records, with_entry_call(cpu->taken));
	EXPECT_EQ(t.result.foreign_stops, 1u);
	EXPECT_EQ(t.result.interruptions, 1u);
	EXPECT_TRUE(t.result.returned);
}
