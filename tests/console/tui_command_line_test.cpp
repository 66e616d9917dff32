// Command-line editing, history and Tab completion.
#include <gtest/gtest.h>

#include "command_line.hpp"

using namespace vtice::tui;

namespace {

struct RecordingHost : PaneHost {
	std::vector<std::string> printed;
	void show_code(std::uint64_t) override {}
	void show_memory(std::uint64_t) override {}
	void print(const std::string &line, Style) override { printed.push_back(line); }
};

CommandLine make_line(RecordingHost *host = nullptr)
{
	return CommandLine([] {
		return std::vector<std::string>{"break", "backtrace", "bt", "continue", "delete", "disassemble",
						"display", "step", "stepi"};
	}, host);
}

void type(CommandLine &line, const std::string &text)
{
	for (char ch : text)
		line.on_key(static_cast<unsigned char>(ch));
}

std::string enter(CommandLine &line, const std::string &text)
{
	type(line, text);
	EXPECT_TRUE(line.on_key(kKeyEnter) & kSubmit);
	return line.take_line();
}

}  // namespace

TEST(TuiCommandLine, EditingKeys)
{
	auto line = make_line();
	type(line, "brek");
	line.on_key(kKeyLeft);
	line.on_key('a');  // "break" with the cursor after the a
	EXPECT_EQ(line.text(), "break");
	line.on_key(kKeyHome);
	line.on_key(kKeyDelete);
	EXPECT_EQ(line.text(), "reak");
	line.on_key(kKeyEnd);
	line.on_key(kKeyBackspace);
	EXPECT_EQ(line.text(), "rea");
	line.on_key(kKeyLeft);
	line.on_key(kKeyCtrlU);  // kills what is left of the cursor
	EXPECT_EQ(line.text(), "a");
	EXPECT_EQ(line.cursor(), 0u);
	EXPECT_EQ(line.on_key(key_f(5)), kIgnored);
}

TEST(TuiCommandLine, HistoryUpDownKeepsTheDraft)
{
	auto line = make_line();
	EXPECT_EQ(enter(line, "break do_sys_openat2"), "break do_sys_openat2");
	EXPECT_EQ(enter(line, "continue"), "continue");
	EXPECT_EQ(enter(line, "continue"), "continue");  // repeated: stored once
	ASSERT_EQ(line.history().size(), 2u);
	type(line, "bt 5");
	line.on_key(kKeyUp);
	EXPECT_EQ(line.text(), "continue");
	line.on_key(kKeyUp);
	EXPECT_EQ(line.text(), "break do_sys_openat2");
	line.on_key(kKeyUp);  // the oldest entry stays
	EXPECT_EQ(line.text(), "break do_sys_openat2");
	line.on_key(kKeyDown);
	EXPECT_EQ(line.text(), "continue");
	line.on_key(kKeyDown);
	EXPECT_EQ(line.text(), "bt 5");  // back to what was being typed
	EXPECT_EQ(line.cursor(), 4u);
}

TEST(TuiCommandLine, EmptyEnterRepeatsTheLastCommandLikeGdb)
{
	auto line = make_line();
	EXPECT_EQ(enter(line, ""), "");  // nothing to repeat yet
	enter(line, "stepi");
	EXPECT_EQ(enter(line, ""), "stepi");
	EXPECT_EQ(line.history().size(), 1u);
}

TEST(TuiCommandLine, HistoryIsBounded)
{
	auto line = make_line();
	for (std::size_t i = 0; i < CommandLine::kHistoryLimit + 5; ++i)
		enter(line, "x " + std::to_string(i));
	EXPECT_EQ(line.history().size(), CommandLine::kHistoryLimit);
	EXPECT_EQ(line.history().front(), "x 5");
}

TEST(TuiCommandLine, TabCompletesAUniqueNameWithASpace)
{
	auto line = make_line();
	type(line, "con");
	EXPECT_EQ(line.on_key(kKeyTab), kConsumed);
	EXPECT_EQ(line.text(), "continue ");
}

TEST(TuiCommandLine, TabExtendsToTheCommonPrefixThenListsCandidates)
{
	RecordingHost host;
	auto line = make_line(&host);
	type(line, "di");
	line.on_key(kKeyTab);  // disassemble, display: common prefix "dis"
	EXPECT_EQ(line.text(), "dis");
	EXPECT_TRUE(host.printed.empty());
	line.on_key(kKeyTab);  // no progress: show the candidates
	EXPECT_EQ(line.text(), "dis");
	ASSERT_EQ(host.printed.size(), 1u);
	EXPECT_NE(host.printed[0].find("disassemble"), std::string::npos);
	EXPECT_NE(host.printed[0].find("display"), std::string::npos);
	EXPECT_EQ(host.printed[0].find("delete"), std::string::npos);
}

TEST(TuiCommandLine, TabLeavesArgumentsAndUnknownNamesAlone)
{
	auto line = make_line();
	type(line, "break do_sys");
	line.on_key(kKeyTab);
	EXPECT_EQ(line.text(), "break do_sys");
	line.set_text("zz");
	line.on_key(kKeyTab);
	EXPECT_EQ(line.text(), "zz");
}

TEST(TuiCommandLine, TabOnEmptyInputIsLeftToTheAppToCyclePanes)
{
	auto line = make_line();
	EXPECT_EQ(line.on_key(kKeyTab), kIgnored);
}

TEST(TuiCommandLine, CommonPrefix)
{
	EXPECT_EQ(common_prefix({}), "");
	EXPECT_EQ(common_prefix({"step", "stepi", "stepo"}), "step");
	EXPECT_EQ(common_prefix({"bt", "break"}), "b");
	EXPECT_EQ(common_prefix({"x", "y"}), "");
}

TEST(TuiCommandLine, LongLinesScrollSoTheCursorStaysVisible)
{
	auto line = make_line();
	type(line, std::string(100, 'a'));
	EXPECT_EQ(line.cursor_column(40), 39);
	line.on_key(kKeyHome);
	EXPECT_EQ(line.cursor_column(40), 8);  // just after "(vtice) "
}
