// Key dispatch, focus, commands and resize of the whole screen, on a fake
// terminal and a scripted model.
#include <gtest/gtest.h>

#include "app.hpp"
#include "tui_fake_model.hpp"
#include "tui_fake_terminal.hpp"

using namespace vtice::tui;
using vtice::tui::testing::FakeModel;
using vtice::tui::testing::FakeTerminal;

namespace {

class TuiApp : public ::testing::Test {
protected:
	FakeModel model;
	FakeTerminal terminal{30, 100};
	std::unique_ptr<App> app;

	void SetUp() override
	{
		app = std::make_unique<App>(terminal, model);
		app->render();
		model.log.clear();
	}
	KeyFlags press(Key key)
	{
		KeyFlags flags = app->handle_key(key);
		app->render();
		return flags;
	}
	void type(const std::string &text)
	{
		for (char ch : text)
			press(static_cast<unsigned char>(ch));
	}
	void command(const std::string &text)
	{
		type(text);
		press(kKeyEnter);
	}
	bool logged(const std::string &call) const
	{
		return std::find(model.log.begin(), model.log.end(), call) != model.log.end();
	}
	static std::uint64_t at(int index) { return FakeModel::kBase + 4 * index; }
};

}  // namespace

TEST_F(TuiApp, FunctionKeysDriveTheTarget)
{
	press(key_f(8));
	press(key_f(10));
	press(key_f(12));
	press(key_shift_f(11));
	EXPECT_EQ(model.log, (std::vector<std::string>{"step-into", "registers", "step-over", "registers",
						       "step-out", "registers", "step-out", "registers"}));
	// Each synchronous step moved RIP by one instruction, and the views followed.
	EXPECT_EQ(model.pc_value, at(14));
	EXPECT_EQ(app->disasm().cursor_address(), at(14));
	EXPECT_TRUE(terminal.shows(">ffffffff81001038")) << terminal.screen();
}

TEST_F(TuiApp, ShiftKeysRunBackwardsOnATargetThatCan)
{
	model.backwards = true;
	FakeTerminal wide(30, 160);  // the status bar names the keys where they fit
	App status_only(wide, model);
	status_only.render();
	EXPECT_TRUE(wide.shows("F12 out  Shift: back  F9 bp")) << wide.screen();
	model.log.clear();
	press(key_f(8));
	press(key_shift_f(8));
	press(key_shift_f(10));
	press(key_shift_f(5));
	press(key_shift_f(12));
	EXPECT_EQ(model.log, (std::vector<std::string>{"step-into", "registers", "reverse-step-into", "registers",
						       "reverse-step-over", "registers", "reverse-continue", "registers",
						       "reverse-step-out", "registers"}));
	EXPECT_EQ(model.pc_value, at(7));  // one step on, four back
	EXPECT_EQ(app->disasm().cursor_address(), at(7));
}

TEST_F(TuiApp, ShiftKeysOnATargetThatCannotRunBackwardsSayWhy)
{
	FakeTerminal wide(30, 160);
	App status_only(wide, model);
	status_only.render();
	EXPECT_TRUE(wide.shows("F12 out  F9 bp")) << wide.screen();
	model.log.clear();
	press(key_shift_f(8));
	EXPECT_EQ(model.pc_value, at(10));
	EXPECT_TRUE(terminal.shows("the target cannot run backwards")) << terminal.screen();
}

TEST_F(TuiApp, ContinueRunsUntilThePollReportsTheBreakpoint)
{
	model.breakpoint_set.insert(at(30));
	press(key_f(5));
	EXPECT_EQ(model.state(), RunState::Running);
	EXPECT_TRUE(terminal.shows("[running]")) << terminal.screen();
	EXPECT_TRUE(app->poll_target(0));
	app->render();
	EXPECT_EQ(app->disasm().cursor_address(), at(30));
	EXPECT_TRUE(terminal.shows("[stopped: breakpoint]")) << terminal.screen();
	EXPECT_TRUE(terminal.shows("B>ffffffff81001078")) << terminal.screen();
}

TEST_F(TuiApp, CtrlCInterruptsARunningTarget)
{
	press(key_f(5));  // no breakpoint: runs for ever
	EXPECT_FALSE(app->poll_target(0));
	press(kKeyCtrlC);
	EXPECT_TRUE(logged("interrupt"));
	EXPECT_EQ(model.state(), RunState::Stopped);
	EXPECT_EQ(app->disasm().cursor_address(), at(110));
	EXPECT_TRUE(terminal.shows("stopped: interrupted")) << terminal.screen();
	// A second resume request while running is refused, not queued.
	press(key_f(5));
	model.log.clear();
	press(key_f(8));
	EXPECT_FALSE(logged("step-into"));
	EXPECT_TRUE(terminal.shows("the target is running")) << terminal.screen();
}

TEST_F(TuiApp, F9TogglesABreakpointAtTheDisassemblyCursor)
{
	press(kKeyTab);  // command line -> disassembly
	ASSERT_EQ(app->focus(), PaneId::Disasm);
	press(kKeyDown);
	press(kKeyDown);
	press(key_f(9));
	EXPECT_TRUE(logged("toggle " + hex(at(12))));
	EXPECT_TRUE(terminal.shows("B ffffffff81001030")) << terminal.screen();
	EXPECT_TRUE(terminal.shows("1   sw    y    0 ffffffff81001030")) << terminal.screen();
	press(key_f(9));
	EXPECT_FALSE(terminal.shows("B ffffffff81001030")) << terminal.screen();
}

TEST_F(TuiApp, TabCyclesVisiblePanesAndShiftTabGoesBack)
{
	std::vector<PaneId> seen;
	for (int i = 0; i < 8; ++i) {
		press(kKeyTab);
		seen.push_back(app->focus());
	}
	EXPECT_EQ(seen, (std::vector<PaneId>{PaneId::Disasm, PaneId::Registers, PaneId::Backtrace,
					     PaneId::Breakpoints, PaneId::Memory, PaneId::Trace,
					     PaneId::Output, PaneId::Command}));
	press(kKeyBackTab);
	EXPECT_EQ(app->focus(), PaneId::Output);
	EXPECT_TRUE(terminal.shows("[output]")) << terminal.screen();
}

TEST_F(TuiApp, TabCompletesWhileTypingInsteadOfCycling)
{
	type("conti");
	press(kKeyTab);
	EXPECT_EQ(app->focus(), PaneId::Command);
	EXPECT_EQ(app->command_line().text(), "continue ");
	EXPECT_TRUE(terminal.shows("(vtice) continue")) << terminal.screen();
}

TEST_F(TuiApp, TypingInAPaneMovesToTheCommandLine)
{
	press(kKeyTab);
	ASSERT_EQ(app->focus(), PaneId::Disasm);
	type("stepi");
	EXPECT_EQ(app->focus(), PaneId::Command);
	EXPECT_EQ(app->command_line().text(), "stepi");
}

TEST_F(TuiApp, CommandsRunThroughTheModelAndPrintToTheOutputPane)
{
	command("break func");
	EXPECT_TRUE(logged("execute break func"));
	EXPECT_TRUE(terminal.shows("(vtice) break func")) << terminal.screen();
	EXPECT_TRUE(terminal.shows("Breakpoint at 0xffffffff81001000")) << terminal.screen();
	EXPECT_TRUE(terminal.shows("1   sw    y    0 ffffffff81001000")) << terminal.screen();
	command("break nowhere");
	EXPECT_TRUE(terminal.shows("no symbol 'nowhere'")) << terminal.screen();
	command("stepi");  // the engine stepped: views follow the new RIP
	EXPECT_EQ(app->disasm().cursor_address(), at(11));
	press(kKeyEnter);  // empty Enter repeats it
	EXPECT_EQ(app->disasm().cursor_address(), at(12));
}

TEST_F(TuiApp, ViewCommandsMoveThePanes)
{
	command("mem 0x1000");
	EXPECT_EQ(app->memory().address(), 0x1000u);
	EXPECT_TRUE(terminal.shows("0000000000001000  00 01 02 03")) << terminal.screen();
	command("code func");
	EXPECT_EQ(app->disasm().cursor_address(), FakeModel::kBase);
	command("focus trace");
	EXPECT_EQ(app->focus(), PaneId::Trace);
	command("zoom trace");
	EXPECT_EQ(app->zoomed(), PaneId::Trace);
	EXPECT_EQ(app->layout()[PaneId::Trace], (Rect{1, 0, 28, 100}));
	command("zoom");  // no argument: the focused pane, toggled back
	EXPECT_EQ(app->zoomed(), std::nullopt);
	command("focus nowhere");
	EXPECT_TRUE(terminal.shows("focus: no pane 'nowhere'")) << terminal.screen();
	EXPECT_TRUE(model.log.empty()) << model.log.front();  // none reached the engine
}

TEST_F(TuiApp, QuitByKeyInAPaneAndByCommand)
{
	type("q");  // on the command line q is just a letter
	EXPECT_FALSE(app->quitting());
	press(kKeyEnter);  // ... and "q" the gdb abbreviation of quit
	EXPECT_TRUE(app->quitting());

	FakeModel other;
	FakeTerminal screen(24, 80);
	App second(screen, other);
	second.render();
	second.handle_key(kKeyTab);
	EXPECT_TRUE(second.handle_key('q') & kQuit);
	EXPECT_TRUE(second.quitting());
}

TEST_F(TuiApp, EngineCommandsCanAskToLeave)
{
	command("detach");
	EXPECT_TRUE(app->quitting());
}

TEST_F(TuiApp, HelpPaneListsTheKeysAndClosesWithEsc)
{
	press(key_f(1));
	EXPECT_TRUE(app->help_visible());
	EXPECT_TRUE(terminal.shows("F5              continue")) << terminal.screen();
	EXPECT_TRUE(terminal.shows("F12, Shift-F11  step out (finish)")) << terminal.screen();
	for (const auto &line : HelpPane::text())
		EXPECT_LE(line.size(), 79u) << line;  // fits an 80-column terminal
	EXPECT_TRUE(terminal.shows("Ctrl-C")) << terminal.screen();
	EXPECT_FALSE(terminal.shows(" registers ")) << terminal.screen();
	press(kKeyEscape);
	EXPECT_FALSE(app->help_visible());
	EXPECT_TRUE(terminal.shows(" registers ")) << terminal.screen();
	press(kKeyEscape);
	press('q');  // q closes help without quitting
	EXPECT_FALSE(app->help_visible());
	EXPECT_FALSE(app->quitting());
}

TEST_F(TuiApp, ChangedRegistersAreHighlighted)
{
	auto rax = terminal.find("rax");
	auto rbx = terminal.find("rbx");
	ASSERT_GE(rax.first, 0) << terminal.screen();
	// Values start after the widest name (3) and a space.
	EXPECT_EQ(terminal.style_at(rax.first, rax.second + 4), Style::Changed);
	EXPECT_EQ(terminal.style_at(rbx.first, rbx.second + 4), Style::Normal);
	press(key_f(5));  // running: the last stop's values are shown dimmed
	EXPECT_EQ(terminal.style_at(rax.first, rax.second + 4), Style::Dim);
}

TEST_F(TuiApp, ResizeRelaysOutWithoutStaleCells)
{
	ASSERT_EQ(app->layout()[PaneId::Disasm].cols, 59);  // 100 - 40 - 1
	terminal.resize(20, 60);
	press(kKeyResize);
	EXPECT_EQ(terminal.size_refreshes(), 1);
	EXPECT_EQ(app->layout()[PaneId::Command], (Rect{19, 0, 1, 60}));
	EXPECT_TRUE(app->layout().separators.empty());
	EXPECT_FALSE(app->layout().visible(PaneId::Backtrace));
	// The byte column is 24 wide plus a space: 11 characters of bytes, 14 of pad.
	EXPECT_TRUE(terminal.shows(">ffffffff81001028")) << terminal.screen();
	// Focus on a pane the new size hides falls back to the command line.
	terminal.resize(30, 100);
	press(kKeyResize);
	app->set_focus(PaneId::Trace);
	terminal.resize(20, 60);
	press(kKeyResize);
	EXPECT_EQ(app->focus(), PaneId::Command);
	// Grow back: the right column returns.
	terminal.resize(40, 140);
	press(kKeyResize);
	EXPECT_TRUE(app->layout().visible(PaneId::Backtrace));
	EXPECT_TRUE(terminal.shows(" backtrace ")) << terminal.screen();
	EXPECT_TRUE(terminal.shows("#1  ffffffff81001400  caller+0x10")) << terminal.screen();
}

TEST_F(TuiApp, TheRunLoopEndsOnQ)
{
	terminal.push_keys({kKeyTab, key_f(8), 'q'});
	EXPECT_EQ(app->run(), 0);
	EXPECT_TRUE(logged("step-into"));
}

TEST_F(TuiApp, BacktraceEnterShowsTheFramesCode)
{
	app->set_focus(PaneId::Backtrace);
	press(kKeyDown);
	press(kKeyEnter);
	EXPECT_EQ(app->disasm().cursor_address(), FakeModel::kBase + 0x400);
}

TEST_F(TuiApp, F2ZoomsTheFocusedPaneAndF6FlipsToTheCode)
{
	press(key_f(6));
	EXPECT_EQ(app->focus(), PaneId::Disasm);
	press(key_f(2));
	EXPECT_EQ(app->layout()[PaneId::Disasm], (Rect{1, 0, 28, 100}));
	EXPECT_FALSE(app->layout().visible(PaneId::Registers));
	press(key_f(2));
	EXPECT_TRUE(app->layout().visible(PaneId::Registers));
	press(key_f(6));
	EXPECT_EQ(app->focus(), PaneId::Command);
	app->set_focus(PaneId::Trace);  // from any other pane F6 goes to the code
	press(key_f(6));
	EXPECT_EQ(app->focus(), PaneId::Disasm);
}

TEST_F(TuiApp, TypingACommandFromAnyPaneNeverTriggersPaneKeys)
{
	command("break func");
	app->set_focus(PaneId::Breakpoints);
	command("disassemble");  // 'd' must not delete the breakpoint
	EXPECT_TRUE(logged("execute disassemble"));
	EXPECT_EQ(model.breakpoint_set.size(), 1u);
	app->set_focus(PaneId::Breakpoints);
	press(kKeyDelete);
	EXPECT_TRUE(model.breakpoint_set.empty());
}

TEST_F(TuiApp, WideDisassemblyShowsInstructionBytes)
{
	EXPECT_FALSE(terminal.shows("00 00 00 00  insn_10")) << terminal.screen();
	terminal.resize(40, 200);
	press(kKeyResize);
	// The byte column is 24 wide plus a space: 11 characters of bytes, 14 of pad.
	EXPECT_TRUE(terminal.shows(">ffffffff81001028  <func+0x28>  00 00 00 00" + std::string(14, ' ') + "insn_10"))
		<< terminal.screen();
}

TEST_F(TuiApp, NarrowDisassemblyDropsTheAddressBeforeTheText)
{
	terminal.resize(24, 50);
	press(kKeyResize);
	auto at = terminal.find("insn_10");
	ASSERT_GE(at.first, 0) << terminal.screen();
	EXPECT_EQ(terminal.row(at.first).rfind(" ><func+0x28>", 0), 0u) << terminal.screen();
	// The title still carries the cursor's address.
	EXPECT_TRUE(terminal.shows("disassembly  0xffffffff81001028")) << terminal.screen();
}

TEST_F(TuiApp, CursorBarOnlyInThePaneThatHasTheKeys)
{
	press(key_f(6));  // to the disassembly
	press(kKeyDown);  // cursor one below RIP
	auto at = terminal.find("insn_11");
	ASSERT_GE(at.first, 0) << terminal.screen();
	EXPECT_EQ(terminal.style_at(at.first, 5), Style::Cursor);
	auto rip = terminal.find("insn_10");
	EXPECT_EQ(terminal.style_at(rip.first, 5), Style::Current);
	press(key_f(6));  // back to the command line: no bar, RIP still marked
	EXPECT_EQ(terminal.style_at(at.first, 5), Style::Normal);
	EXPECT_EQ(terminal.style_at(rip.first, 5), Style::Current);
}

TEST(TuiOutputPane, LongLinesWrapAndScrollByRows)
{
	OutputPane pane;
	FakeTerminal terminal(3, 10);
	Canvas canvas(terminal, {0, 0, 3, 10});
	pane.append("first");
	pane.append(std::string(10, 'a') + std::string(10, 'b') + "cc");  // three rows at width 10
	pane.draw(canvas);
	EXPECT_EQ(terminal.row(0), "aaaaaaaaaa");
	EXPECT_EQ(terminal.row(1), "bbbbbbbbbb");
	EXPECT_EQ(terminal.row(2), "cc        ");
	pane.on_key(kKeyUp);  // one wrapped row up
	terminal.clear();
	pane.draw(canvas);
	EXPECT_EQ(terminal.row(0), "first     ");
	EXPECT_EQ(terminal.row(2), "bbbbbbbbbb");
	pane.append("new");  // scrolled back: the view stays put
	terminal.clear();
	pane.draw(canvas);
	EXPECT_EQ(terminal.row(0), "first     ");
	pane.on_key(kKeyEnd);
	terminal.clear();
	pane.draw(canvas);
	EXPECT_EQ(terminal.row(2), "new       ");
	pane.on_key(kKeyHome);  // the first row, however far up
	terminal.clear();
	pane.draw(canvas);
	EXPECT_EQ(terminal.row(0), "first     ");
	EXPECT_EQ(terminal.row(1), "aaaaaaaaaa");
	pane.append("x\ty\nz");  // tabs become spaces, newlines split
	EXPECT_EQ(pane.line(pane.size() - 2), "x y");
	EXPECT_EQ(pane.line(pane.size() - 1), "z");
}

// A replay knows memory byte by byte: a read of the pane's span fails as a
// whole, and the pane shows the bytes it can read piece by piece.
TEST(TuiMemoryPane, ShowsTheReadableBytesOfASpanThatFailsAsAWhole)
{
	FakeModel model;
	for (std::uint64_t at = 0x1008; at < 0x1040; ++at)
		model.unreadable.insert(at);
	MemoryPane pane(model);
	pane.show(0x1000);
	FakeTerminal terminal(4, 90);
	Canvas canvas(terminal, {0, 0, 4, 90});
	pane.draw(canvas);
	EXPECT_EQ(terminal.row(0).rfind("0000000000001000  00 01 02 03 04 05 06 07 ?? ?? ", 0), 0u) << terminal.screen();
	EXPECT_EQ(terminal.row(3).rfind("0000000000001030  ?? ?? ", 0), 0u) << terminal.screen();
	int reads = model.reads;
	pane.draw(canvas);
	EXPECT_EQ(model.reads, reads) << "drawn again from what the last draw read (a slow line reads once)";
	model.unreadable.insert(0x1000);  // nothing readable: the error says why
	pane.forget_bytes();
	pane.draw(canvas);
	EXPECT_TRUE(terminal.shows("cannot read memory at 0x1000")) << terminal.screen();
}
