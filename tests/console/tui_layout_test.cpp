// Layout arithmetic: hand-derived rectangles for common sizes, and coverage
// invariants (in bounds, no overlap, whole body used) for every size.
#include <gtest/gtest.h>

#include <vector>

#include "layout.hpp"

using namespace vtice::tui;

namespace {

Layout layout_for(int rows, int cols, int register_rows = 3)
{
	return compute_layout({{rows, cols}, register_rows, std::nullopt});
}

// Every body cell (rows 1..rows-2) belongs to exactly one pane or separator.
void expect_tiles_body(const Layout &layout, int rows, int cols)
{
	std::vector<std::vector<int>> owners(rows, std::vector<int>(cols, 0));
	auto mark = [&](const Rect &rect) {
		for (int r = rect.row; r < rect.row + rect.rows; ++r)
			for (int c = rect.col; c < rect.col + rect.cols; ++c) {
				ASSERT_TRUE(r >= 0 && r < rows && c >= 0 && c < cols)
					<< rows << "x" << cols << " cell " << r << "," << c;
				++owners[r][c];
			}
	};
	for (const auto &rect : layout.panes)
		if (!rect.empty())
			mark(rect);
	for (const auto &rect : layout.separators)
		mark(rect);
	mark(layout.status);
	for (int r = 0; r < rows; ++r)
		for (int c = 0; c < cols; ++c)
			ASSERT_EQ(owners[r][c], 1) << rows << "x" << cols << " cell " << r << "," << c;
}

}  // namespace

// 80x24, 3 register rows. Body = 22 rows; output = 22/5 = 4; registers =
// min(1+3, max(2, 22/4=5)) = 4; middle = 14 rows. Right column =
// clamp(80*2/5=32, 28, 60) = 32, left = 80-32-1 = 47. Left: disasm 14*2/3 = 9,
// memory 5. Right: backtrace 14/4 = 3, breakpoints 3, trace 8.
TEST(TuiLayout, Classic80x24)
{
	Layout l = layout_for(24, 80);
	EXPECT_EQ(l.status, (Rect{0, 0, 1, 80}));
	EXPECT_EQ(l[PaneId::Command], (Rect{23, 0, 1, 80}));
	EXPECT_EQ(l[PaneId::Registers], (Rect{1, 0, 4, 80}));
	EXPECT_EQ(l[PaneId::Disasm], (Rect{5, 0, 9, 47}));
	EXPECT_EQ(l[PaneId::Memory], (Rect{14, 0, 5, 47}));
	ASSERT_EQ(l.separators.size(), 1u);
	EXPECT_EQ(l.separators[0], (Rect{5, 47, 14, 1}));
	EXPECT_EQ(l[PaneId::Backtrace], (Rect{5, 48, 3, 32}));
	EXPECT_EQ(l[PaneId::Breakpoints], (Rect{8, 48, 3, 32}));
	EXPECT_EQ(l[PaneId::Trace], (Rect{11, 48, 8, 32}));
	EXPECT_EQ(l[PaneId::Output], (Rect{19, 0, 4, 80}));
	EXPECT_FALSE(l.visible(PaneId::Help));
}

// 160x50, 2 register rows: body 48, output 9, registers 3, middle 36; right
// = clamp(64, 28, 60) = 60, left 99; disasm 36*2/3 = 24, memory 12;
// backtrace 9, breakpoints 9, trace 18.
TEST(TuiLayout, Wide160x50)
{
	Layout l = layout_for(50, 160, 2);
	EXPECT_EQ(l[PaneId::Registers], (Rect{1, 0, 3, 160}));
	EXPECT_EQ(l[PaneId::Disasm], (Rect{4, 0, 24, 99}));
	EXPECT_EQ(l[PaneId::Memory], (Rect{28, 0, 12, 99}));
	EXPECT_EQ(l[PaneId::Backtrace], (Rect{4, 100, 9, 60}));
	EXPECT_EQ(l[PaneId::Breakpoints], (Rect{13, 100, 9, 60}));
	EXPECT_EQ(l[PaneId::Trace], (Rect{22, 100, 18, 60}));
	EXPECT_EQ(l[PaneId::Output], (Rect{40, 0, 9, 160}));
}

TEST(TuiLayout, NarrowTerminalDropsRightColumn)
{
	Layout l = layout_for(30, 60);
	EXPECT_TRUE(l.separators.empty());
	EXPECT_FALSE(l.visible(PaneId::Backtrace));
	EXPECT_FALSE(l.visible(PaneId::Trace));
	EXPECT_EQ(l[PaneId::Disasm].cols, 60);
}

TEST(TuiLayout, ShortTerminalDropsRegistersAndMemory)
{
	// Body 6: output 2, registers max(2, 6/4) = 2 would leave 2 < 3 middle
	// rows, so they go; the 4-row middle is too short for memory.
	Layout l = layout_for(8, 80, 6);
	EXPECT_FALSE(l.visible(PaneId::Registers));
	EXPECT_FALSE(l.visible(PaneId::Memory));
	EXPECT_EQ(l[PaneId::Disasm], (Rect{1, 0, 4, 47}));
	EXPECT_EQ(l[PaneId::Output], (Rect{5, 0, 2, 80}));
	// One row taller and the registers fit (body 7: 2 + 3 + 2; max(2, 7/4) = 2).
	EXPECT_EQ(layout_for(9, 80, 6)[PaneId::Registers], (Rect{1, 0, 2, 80}));
}

TEST(TuiLayout, ZoomTakesTheWholeBody)
{
	Layout l = compute_layout({{24, 80}, 3, PaneId::Trace});
	EXPECT_EQ(l[PaneId::Trace], (Rect{1, 0, 22, 80}));
	EXPECT_FALSE(l.visible(PaneId::Disasm));
	EXPECT_TRUE(l.visible(PaneId::Command));
	expect_tiles_body(l, 24, 80);
}

TEST(TuiLayout, TinyAndEmptyScreensKeepTheCommandLine)
{
	EXPECT_FALSE(layout_for(0, 0).visible(PaneId::Command));
	Layout one = layout_for(1, 5);
	EXPECT_EQ(one[PaneId::Command], (Rect{0, 0, 1, 5}));
	Layout small = layout_for(4, 10);
	EXPECT_EQ(small[PaneId::Output], (Rect{1, 0, 2, 10}));
	EXPECT_FALSE(small.visible(PaneId::Disasm));
}

TEST(TuiLayout, EverySizeTilesTheScreenExactly)
{
	for (int rows = 3; rows <= 70; ++rows)
		for (int cols = 1; cols <= 200; cols += 3)
			for (int regs : {1, 4, 12}) {
				expect_tiles_body(layout_for(rows, cols, regs), rows, cols);
				if (::testing::Test::HasFatalFailure())
					return;
			}
}

TEST(TuiLayout, PaneNamesRoundTrip)
{
	for (int i = 0; i < kPaneCount; ++i) {
		auto id = static_cast<PaneId>(i);
		EXPECT_EQ(pane_from_name(pane_name(id)), id);
	}
	EXPECT_EQ(pane_from_name("asm"), std::nullopt);
	EXPECT_EQ(pane_from_name("regs"), PaneId::Registers);
	EXPECT_EQ(pane_from_name("stack"), PaneId::Backtrace);
}
