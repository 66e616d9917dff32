// condition, ignore, commands and watch ... if, through the command table as
// batch mode runs them, against a target whose crossings are scripted: the
// expected stops, hits and outputs follow from each test's script.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <set>
#include <string>

#include "commands/command.hpp"
#include "scripted_target.hpp"

using namespace vtice;
using namespace vtice::dbg;
using fake::ScriptedTarget;

namespace {

constexpr std::uint64_t kBreak = ScriptedTarget::kCode + 0x40;
constexpr std::uint64_t kOther = ScriptedTarget::kCode + 0x80;
constexpr std::uint64_t kData = 0xffff888000001000ull;
const std::string kBreakAt = "*0xffffffff81000040";
const std::string kOtherAt = "*0xffffffff81000080";
const std::string kDataAt = "0xffff888000001000";

// A Session on a ScriptedTarget, driven as batch mode drives it: one line
// at a time, with the lines after it as the input of commands that read a block.
class Console {
public:
	Console()
	{
		auto target = std::make_unique<ScriptedTarget>();
		target_ = target.get();
		session_ = std::make_unique<Session>(std::move(target));
		ctx_ = std::make_unique<CommandContext>(CommandContext{*session_, out_});
		ctx_->read_line = [this]() -> std::optional<std::string> {
			if (input_.empty())
				return std::nullopt;
			std::string line = input_.front();
			input_.pop_front();
			return line;
		};
		EXPECT_TRUE(session_->attach().ok());
	}

	// Runs each line; the first error ends the batch, as without --keep-going.
	Result<void> run(std::initializer_list<std::string> lines)
	{
		input_.assign(lines.begin(), lines.end());
		while (!input_.empty()) {
			std::string line = input_.front();
			input_.pop_front();
			if (auto r = execute_line(*ctx_, line); !r)
				return r;
		}
		return {};
	}

	// Crossings of kBreak with rdi = first, first + 1, ... last.
	void cross_break(std::uint64_t first, std::uint64_t last)
	{
		for (std::uint64_t rdi = first; rdi <= last; rdi++)
			target_->script.push_back({.pc = kBreak, .rdi = rdi});
	}
	void access(BreakKind kind, std::uint64_t rdi)
	{
		target_->script.push_back({.pc = kOther, .rdi = rdi, .access = kind, .address = kData + 2});
	}

	std::uint64_t rdi() { return *session_->register_value("rdi"); }
	const Breakpoint &bp(int id)
	{
		for (const auto &b : session_->breakpoints())
			if (b.id == id)
				return b;
		ADD_FAILURE() << "no breakpoint " << id;
		return session_->breakpoints().front();
	}
	std::size_t breakpoint_count() const { return session_->breakpoints().size(); }
	std::string output() { return out_.text(); }
	void clear_output() { out_.clear(); }
	ScriptedTarget &target() { return *target_; }
	Session &session() { return *session_; }
	std::size_t unread_input() const { return input_.size(); }

private:
	ScriptedTarget *target_;
	std::unique_ptr<Session> session_;
	StringOutput out_;
	std::unique_ptr<CommandContext> ctx_;
	std::deque<std::string> input_;
};

std::size_t count(const std::string &text, const std::string &what)
{
	std::size_t n = 0;
	for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
		n++;
	return n;
}

std::string error_of(const Result<void> &r)
{
	return r ? std::string("(no error)") : r.error().to_string();
}

}  // namespace

TEST(ConditionCommand, SetMakesTheBreakpointStopOnlyWhenTrue)
{
	Console c;
	c.cross_break(1, 5);
	ASSERT_TRUE(c.run({"break " + kBreakAt, "condition 1 $rdi == 4", "continue"}));
	EXPECT_EQ(c.rdi(), 4u);
	EXPECT_EQ(c.bp(1).spec.condition, "$rdi == 4");
	EXPECT_EQ(c.bp(1).hits, 1u);  // crossings with a false condition are no hits
	EXPECT_EQ(c.target().script.size(), 1u);
}

TEST(ConditionCommand, WithoutExpressionClearsIt)
{
	Console c;
	c.cross_break(1, 5);
	ASSERT_TRUE(c.run({"break " + kBreakAt + " if $rdi == 4", "condition 1"}));
	EXPECT_NE(c.output().find("Breakpoint 1 now unconditional."), std::string::npos) << c.output();
	EXPECT_EQ(c.bp(1).spec.condition, "");
	ASSERT_TRUE(c.run({"continue"}));
	EXPECT_EQ(c.rdi(), 1u);
}

TEST(ConditionCommand, BadExpressionIsRefusedAndTheOldOneKept)
{
	Console c;
	ASSERT_TRUE(c.run({"break " + kBreakAt + " if $rdi == 4"}));
	auto r = c.run({"condition 1 $nosuch == 1"});
	EXPECT_NE(error_of(r).find("no register named 'nosuch'"), std::string::npos) << error_of(r);
	r = c.run({"condition 1 $rdi =="});
	EXPECT_NE(error_of(r).find("bad condition '$rdi =='"), std::string::npos) << error_of(r);
	EXPECT_EQ(c.bp(1).spec.condition, "$rdi == 4");
}

TEST(ConditionCommand, UnknownBreakpointIsAnError)
{
	Console c;
	ASSERT_TRUE(c.run({"break " + kBreakAt}));
	EXPECT_EQ(error_of(c.run({"condition 7 $rdi == 1"})), "no breakpoint number 7");
	EXPECT_EQ(error_of(c.run({"condition x $rdi == 1"})), "'x' is not a breakpoint number");
	EXPECT_EQ(error_of(c.run({"condition"})).rfind("usage: condition", 0), 0u);
}

TEST(IgnoreCommand, PassesTheNextCountHits)
{
	Console c;
	c.cross_break(1, 5);
	ASSERT_TRUE(c.run({"break " + kBreakAt, "ignore 1 2"}));
	EXPECT_NE(c.output().find("Will ignore next 2 crossings of breakpoint 1."), std::string::npos) << c.output();
	ASSERT_TRUE(c.run({"continue"}));
	EXPECT_EQ(c.rdi(), 3u);
	EXPECT_EQ(c.bp(1).hits, 3u);  // gdb counts the ignored crossings as hits
	EXPECT_EQ(c.bp(1).ignore_count, 0u);
	ASSERT_TRUE(c.run({"continue"}));
	EXPECT_EQ(c.rdi(), 4u);
}

TEST(IgnoreCommand, InfoBreakpointsShowsTheRemainingCount)
{
	Console c;
	c.cross_break(1, 2);
	ASSERT_TRUE(c.run({"break " + kBreakAt, "ignore 1 3", "info breakpoints"}));
	EXPECT_NE(c.output().find("\tWill ignore next 3 crossings of breakpoint.\n"), std::string::npos) << c.output();
	c.clear_output();
	ASSERT_TRUE(c.run({"continue", "info breakpoints"}));  // two crossings, then the script ends
	EXPECT_NE(c.output().find("Interrupted at"), std::string::npos) << c.output();
	EXPECT_NE(c.output().find("\tWill ignore next crossing of breakpoint.\n"), std::string::npos) << c.output();
	EXPECT_EQ(c.bp(1).hits, 2u);
}

TEST(IgnoreCommand, CountsOnlyCrossingsWhoseConditionHolds)
{
	Console c;
	c.cross_break(1, 5);
	// 1: ignored; 2: condition false; 3: ignored; 4: stops.
	ASSERT_TRUE(c.run({"break " + kBreakAt + " if $rdi != 2", "ignore 1 2", "continue"}));
	EXPECT_EQ(c.rdi(), 4u);
	EXPECT_EQ(c.bp(1).hits, 3u);
}

TEST(IgnoreCommand, ZeroCountAndBadInput)
{
	Console c;
	ASSERT_TRUE(c.run({"break " + kBreakAt, "ignore 1 4", "ignore 1 0"}));
	EXPECT_NE(c.output().find("Will stop next time breakpoint 1 is reached."), std::string::npos) << c.output();
	EXPECT_EQ(c.bp(1).ignore_count, 0u);
	ASSERT_TRUE(c.run({"ignore 1 1"}));
	EXPECT_NE(c.output().find("Will ignore next crossing of breakpoint 1."), std::string::npos) << c.output();
	EXPECT_EQ(error_of(c.run({"ignore 1"})), "usage: ignore N COUNT");
	EXPECT_NE(error_of(c.run({"ignore 1 -3"})).find("ignore count '-3'"), std::string::npos);
	EXPECT_NE(error_of(c.run({"ignore 1 many"})).find("ignore count 'many'"), std::string::npos);
	EXPECT_EQ(error_of(c.run({"ignore 9 2"})), "no breakpoint number 9");
	EXPECT_EQ(c.bp(1).ignore_count, 1u);
}

TEST(CommandsCommand, ListRunsWhenTheBreakpointStops)
{
	Console c;
	c.cross_break(1, 2);
	ASSERT_TRUE(c.run({"break " + kBreakAt, "commands 1", "print /x $rdi + 0x100", "end"}));
	EXPECT_EQ(c.bp(1).commands, (std::vector<std::string>{"print /x $rdi + 0x100"}));
	c.clear_output();
	ASSERT_TRUE(c.run({"continue"}));
	EXPECT_NE(c.output().find("Breakpoint 1 at 0xffffffff81000040\n"), std::string::npos) << c.output();
	// The list runs after the stop report, with the stop's registers.
	EXPECT_GT(c.output().find("0x101\n"), c.output().find("Breakpoint 1 at")) << c.output();
	EXPECT_EQ(c.rdi(), 1u);
}

TEST(CommandsCommand, SilentDropsTheStopReport)
{
	Console c;
	c.cross_break(1, 2);
	ASSERT_TRUE(c.run({"break " + kBreakAt, "commands", "silent", "print /x $rdi", "end"}));
	c.clear_output();
	ASSERT_TRUE(c.run({"continue"}));
	EXPECT_EQ(c.output(), "Continuing.\n0x1\n");
}

TEST(CommandsCommand, ContinueInTheListResumesUntilNoBreakpointStops)
{
	Console c;
	c.cross_break(1, 5);
	ASSERT_TRUE(c.run({"break " + kBreakAt, "commands 1", "silent", "print /x $rdi", "continue", "end"}));
	c.clear_output();
	ASSERT_TRUE(c.run({"continue"}));
	EXPECT_EQ(c.output(), "Continuing.\n0x1\nContinuing.\n0x2\nContinuing.\n0x3\nContinuing.\n0x4\n"
			      "Continuing.\n0x5\nContinuing.\nInterrupted at 0xffffffff81000800\n"
			      "=> 0xffffffff81000800:\tnop\n");
	EXPECT_EQ(c.bp(1).hits, 5u);
	EXPECT_TRUE(c.target().script.empty());
}

TEST(CommandsCommand, ContinueLoopKeepsTheStackFlat)
{
	Console c;
	constexpr std::uint64_t kHits = 300;
	c.cross_break(1, kHits);
	ASSERT_TRUE(c.run({"break " + kBreakAt, "commands", "silent", "continue", "end", "continue"}));
	EXPECT_EQ(c.bp(1).hits, kHits);
	// The first continue is typed; every later one comes from a list, and
	// each must run at the same stack depth as the one before.
	auto &frames = c.target().continue_frames;
	ASSERT_EQ(frames.size(), kHits + 1);
	EXPECT_EQ(std::set<std::uintptr_t>(frames.begin() + 1, frames.end()).size(), 1u);
}

TEST(CommandsCommand, LinesAfterAResumeAreDropped)
{
	Console c;
	c.cross_break(1, 3);
	ASSERT_TRUE(c.run({"break " + kBreakAt, "commands 1", "continue", "print 0x77", "end"}));
	c.clear_output();
	ASSERT_TRUE(c.run({"continue"}));
	EXPECT_EQ(c.bp(1).hits, 3u);
	EXPECT_EQ(count(c.output(), "0x77"), 0u) << c.output();
	EXPECT_EQ(count(c.output(), "Breakpoint 1 at"), 3u) << c.output();
}

TEST(CommandsCommand, WithoutNumberTakesTheBreakpointSetLast)
{
	Console c;
	ASSERT_TRUE(c.run({"break " + kBreakAt, "break " + kOtherAt, "commands", "print 1", "end"}));
	EXPECT_TRUE(c.bp(1).commands.empty());
	EXPECT_EQ(c.bp(2).commands, (std::vector<std::string>{"print 1"}));
}

TEST(CommandsCommand, EmptyListRemovesTheCommands)
{
	Console c;
	ASSERT_TRUE(c.run({"break " + kBreakAt, "commands", "  print 1  ", "end", "info breakpoints"}));
	EXPECT_NE(c.output().find("\n        print 1\n"), std::string::npos) << c.output();
	ASSERT_TRUE(c.run({"commands 1", "end"}));
	EXPECT_TRUE(c.bp(1).commands.empty());
}

TEST(CommandsCommand, BadListIsRefusedWholeAndItsBodyNotRun)
{
	Console c;
	c.cross_break(1, 1);
	auto r = c.run({"break " + kBreakAt, "commands 1", "print 1", "frobnicate", "end", "print 2"});
	EXPECT_NE(error_of(r).find("'frobnicate': unknown command"), std::string::npos) << error_of(r);
	EXPECT_TRUE(c.bp(1).commands.empty());
	EXPECT_EQ(c.unread_input(), 1u);  // the batch stopped right after "end"
	r = c.run({"commands 9", "continue", "end"});
	EXPECT_EQ(error_of(r), "no breakpoint number 9");
	EXPECT_TRUE(c.target().continue_frames.empty());  // the body's continue never ran
	r = c.run({"commands 1", "print 1", "commands 1", "end"});
	EXPECT_EQ(error_of(r), "commands: a command list cannot contain 'commands'");
}

TEST(CommandsCommand, InputEndingBeforeEndIsAnError)
{
	Console c;
	auto r = c.run({"break " + kBreakAt, "commands", "print 1"});
	EXPECT_EQ(error_of(r), "commands: the input ended before the list's 'end'");
	EXPECT_TRUE(c.bp(1).commands.empty());
	EXPECT_EQ(error_of(Console().run({"commands", "end"})), "commands: no breakpoint has been set yet");
}

TEST(CommandsCommand, ErrorInTheListEndsItAndNamesTheBreakpoint)
{
	Console c;
	c.cross_break(1, 2);
	auto r = c.run({"break " + kBreakAt, "commands", "print $nosuch", "print 0x55", "end", "continue"});
	EXPECT_NE(error_of(r).find("breakpoint 1 command 'print $nosuch': no register named 'nosuch'"),
		  std::string::npos) << error_of(r);
	EXPECT_EQ(count(c.output(), "0x55"), 0u);
}

TEST(CommandsCommand, TemporaryBreakpointRunsItsListOnce)
{
	Console c;
	c.cross_break(1, 2);
	ASSERT_TRUE(c.run({"tbreak " + kBreakAt, "commands", "silent", "print /x $rdi + 0x200", "end", "continue"}));
	EXPECT_TRUE(c.output().ends_with("Continuing.\n0x201\n")) << c.output();
	EXPECT_EQ(c.breakpoint_count(), 0u);
}

TEST(WatchCommand, IfConditionPassesCrossingsWhereItIsFalse)
{
	Console c;
	for (std::uint64_t rdi = 1; rdi <= 4; rdi++)
		c.access(BreakKind::WriteWatch, rdi);
	ASSERT_TRUE(c.run({"watch -l4 " + kDataAt + " if $rdi == 3"}));
	EXPECT_NE(c.output().find("Hardware watchpoint 1: 0xffff888000001000 (4 bytes) if $rdi == 3"),
		  std::string::npos) << c.output();
	ASSERT_TRUE(c.run({"continue"}));
	EXPECT_EQ(c.rdi(), 3u);
	EXPECT_EQ(c.bp(1).hits, 1u);
	EXPECT_NE(c.output().find("watchpoint 1 hit (address 0xffff888000001002)"), std::string::npos) << c.output();
}

TEST(WatchCommand, RwatchAndAwatchSetTheirKinds)
{
	Console c;
	ASSERT_TRUE(c.run({"rwatch " + kDataAt, "awatch -l2 " + kDataAt + " if $rdi", "watch -r " + kDataAt}));
	EXPECT_EQ(c.bp(1).spec.type, BreakKind::ReadWatch);
	EXPECT_EQ(c.bp(2).spec.type, BreakKind::AccessWatch);
	EXPECT_EQ(c.bp(2).spec.length, 2u);
	EXPECT_EQ(c.bp(2).spec.condition, "$rdi");
	EXPECT_EQ(c.bp(3).spec.type, BreakKind::ReadWatch);
	EXPECT_NE(c.output().find("Hardware read watchpoint 1:"), std::string::npos) << c.output();
	EXPECT_NE(c.output().find("Hardware access watchpoint 2:"), std::string::npos) << c.output();
	EXPECT_EQ(error_of(c.run({"watch " + kDataAt + " if"})), "'if' without a condition");
	EXPECT_EQ(error_of(c.run({"awatch if $rdi"})).rfind("usage: awatch", 0), 0u);
}

TEST(WatchCommand, ConditionIgnoreAndCommandsApply)
{
	Console c;
	for (std::uint64_t rdi = 1; rdi <= 5; rdi++)
		c.access(BreakKind::AccessWatch, rdi);
	// 1: ignored; 2: condition false; 3, 4, 5: stop and run the list.
	ASSERT_TRUE(c.run({"awatch " + kDataAt, "condition 1 $rdi != 2", "ignore 1 1", "commands", "silent",
			   "print /x $rdi", "continue", "end"}));
	c.clear_output();
	ASSERT_TRUE(c.run({"continue"}));
	EXPECT_EQ(c.bp(1).hits, 4u);
	EXPECT_EQ(count(c.output(), "\n0x"), 3u) << c.output();
	EXPECT_NE(c.output().find("Continuing.\n0x3\nContinuing.\n0x4\nContinuing.\n0x5\n"), std::string::npos)
		<< c.output();
}

// A static function with several copies: break says so and lists them,
// NAME#N picks one, a number out of range is an error naming the range.
TEST(BreakCommand, ANameWithSeveralCopiesIsReportedAndPickable)
{
	Console console;
	std::vector<SymbolList::Entry> entries = {
		{kBreak, "type_show", 't'}, {kOther, "type_show", 't'}, {kBreak + 0x100, "type_show", 't'},
		{kBreak + 0x200, "unique_fn", 'T'}};
	console.session().set_symbols(std::make_unique<SymbolList>(entries, "test"));
	ASSERT_TRUE(console.run({"break type_show"}).ok()) << console.output();
	EXPECT_NE(console.output().find("note: 'type_show' names 3 symbols"), std::string::npos) << console.output();
	EXPECT_EQ(count(console.output(), "  #"), 3u);
	EXPECT_EQ(console.bp(1).address, kBreak) << "#1 is lookup's own choice";
	console.clear_output();
	ASSERT_TRUE(console.run({"break type_show#2"}).ok()) << console.output();
	EXPECT_EQ(console.bp(2).address, kOther);
	EXPECT_EQ(console.output().find("note:"), std::string::npos) << "an explicit pick needs no note";
	auto r = console.run({"break type_show#4"});
	EXPECT_NE(error_of(r).find("'type_show' names 3 symbols: pick #1 to #3"), std::string::npos) << error_of(r);
	console.clear_output();
	ASSERT_TRUE(console.run({"break unique_fn"}).ok());
	EXPECT_EQ(console.output().find("note:"), std::string::npos) << console.output();
}

// Leaving: detach and disconnect both take every breakpoint out of the
// guest; only detach lets the target run (D), disconnect leaves it stopped.
TEST(LeavingTheTarget, DetachRemovesBreakpointsAndResumes)
{
	Console c;
	c.cross_break(1, 1);
	ASSERT_TRUE(c.run({"break " + kBreakAt, "continue"}).ok());
	EXPECT_EQ(c.target().inserted_count(), 1u);
	ASSERT_TRUE(c.run({"detach"}).ok());
	EXPECT_EQ(c.target().inserted_count(), 0u);
	EXPECT_EQ(c.target().detaches, 1);
	EXPECT_EQ(c.session().state(), SessionState::Detached);
}

TEST(LeavingTheTarget, DisconnectRemovesBreakpointsAndLeavesItStopped)
{
	Console c;
	c.cross_break(1, 1);
	ASSERT_TRUE(c.run({"break " + kBreakAt, "continue"}).ok());
	ASSERT_TRUE(c.run({"disconnect"}).ok());
	EXPECT_EQ(c.target().inserted_count(), 0u);
	EXPECT_EQ(c.target().detaches, 0);
	EXPECT_EQ(c.session().state(), SessionState::Detached);
	EXPECT_NE(c.output().find("the target stays stopped"), std::string::npos);
}


// A non-canonical address is a typo the CPU could never reach: refused.
// The scripted target has no CR4, so the 5-level rule (bits 63..56) applies.
TEST(BreakCommand, NonCanonicalAddressIsRefused)
{
	Console c;
	auto r = c.run({"break *0x0100000000000000"});
	ASSERT_FALSE(r.ok());
	EXPECT_NE(r.error().message.find("not a canonical address"), std::string::npos) << r.error().message;
	EXPECT_EQ(c.breakpoint_count(), 0u);
	EXPECT_TRUE(c.run({"break *0xff00000000000000"}).ok());
}

// QEMU's gdbstub may answer a step without running anything (an interrupt
// pending under its interrupt-masked single step): qemu.tui saw F10 and F8
// stop where they started. stepi must still move one instruction.
TEST(StepCommand, AStepThatRanNothingIsSentAgain)
{
	Console c;
	c.target().idle_steps = 2;
	ASSERT_TRUE(c.run({"stepi"}).ok());
	EXPECT_EQ(*c.session().pc(), ScriptedTarget::kCode + 1);
	EXPECT_EQ(c.target().steps, 3);
}

TEST(StepCommand, AnInstructionThatNeverMovesEndsTheRetries)
{
	Console c;
	c.target().idle_steps = 100;	// jmp $, say
	ASSERT_TRUE(c.run({"stepi"}).ok());
	EXPECT_EQ(*c.session().pc(), ScriptedTarget::kCode);
	EXPECT_EQ(c.target().steps, 1 + Session::kStepRetries);
}
