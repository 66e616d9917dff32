// vtice probe --folded: a kstack map as FlameGraph folded lines. The lines
// are worked out by hand from FlameGraph's format (frames root first,
// ';'-separated, a space and the count).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "checker.hpp"
#include "command_output.hpp"
#include "maps.hpp"
#include "probe_folded.hpp"

using namespace vtice;

namespace {

std::string folded(const probes::MapInfo &info, const probes::MapEntries &entries)
{
	char *text = nullptr;
	size_t len = 0;
	std::FILE *f = open_memstream(&text, &len);
	console::write_folded_map(f, info, entries);
	std::fclose(f);
	std::string out(text, len);
	std::free(text);
	return out;
}

probes::Cell counted(std::int64_t n)
{
	probes::Cell c;
	c.count = n;
	return c;
}

}  // namespace

TEST(ProbeFolded, StacksGoRootFirstAfterTheOtherKeys)
{
	probes::MapInfo info{"@", {probes::Type::String, probes::Type::Stack}, probes::MapKind::Count};
	probes::MapEntries entries;
	entries[{std::string("dd"), std::string("read_zero\nvfs_read\nksys_read")}] = counted(7);
	entries[{std::string("a b;c"), std::string("f;g\nh i")}] = counted(2);
	entries[{std::string("idle"), std::string("")}] = counted(1);
	entries[{std::string("gone"), std::string("x")}] = counted(0);	// no width: left out
	EXPECT_EQ(folded(info, entries), "a\\x20b\\x3bc;h\\x20i;f\\x3bg 2\n"
					 "dd;ksys_read;vfs_read;read_zero 7\n"
					 "idle;[no stack] 1\n");
}

TEST(ProbeFolded, OnlyMapsWithOneStackAndANumberFold)
{
	using probes::MapKind;
	using probes::Type;
	EXPECT_TRUE(console::foldable({"@", {Type::Stack}, MapKind::Count}));
	EXPECT_TRUE(console::foldable({"@", {Type::Int, Type::Stack}, MapKind::Sum}));
	EXPECT_FALSE(console::foldable({"@", {Type::String}, MapKind::Count}));
	EXPECT_FALSE(console::foldable({"@", {Type::Stack, Type::Stack}, MapKind::Count}));
	EXPECT_FALSE(console::foldable({"@", {Type::Stack}, MapKind::Hist}));
	EXPECT_FALSE(console::foldable({"@", {Type::Stack}, MapKind::String}));
	probes::MapEntries entries;
	entries[{std::string("x")}] = counted(3);
	EXPECT_EQ(folded({"@", {Type::String}, MapKind::Count}, entries), "");
}

// FlameGraph's own flamegraph.pl as the oracle: it reads the folded lines
// and draws each frame as wide as its samples, a frame and all it called
// (the totals below worked out by hand from the entries). Debian has no
// package of FlameGraph, so the test runs where flamegraph.pl is in PATH or
// VTICE_FLAMEGRAPH names it, and is skipped elsewhere.
TEST(ProbeFolded, FlameGraphDrawsEachFrameAsWideAsItsSamples)
{
	const char *env = std::getenv("VTICE_FLAMEGRAPH");
	std::string script = env && *env ? env : test::command_output("command -v flamegraph.pl");
	while (!script.empty() && script.back() == '\n')
		script.pop_back();
	if (script.empty())
		GTEST_SKIP() << "flamegraph.pl is not installed (Debian packages no FlameGraph): put it in PATH or set "
				"VTICE_FLAMEGRAPH";
	probes::MapInfo info{"@", {probes::Type::String, probes::Type::Stack}, probes::MapKind::Count};
	probes::MapEntries entries;
	entries[{std::string("dd"), std::string("read_zero\nvfs_read\nksys_read\ndo_syscall_64")}] = counted(7);
	entries[{std::string("dd"), std::string("vfs_write\nksys_write\ndo_syscall_64")}] = counted(5);
	entries[{std::string("cat"), std::string("vfs_read\nksys_read\ndo_syscall_64")}] = counted(3);
	entries[{std::string("a b;c"), std::string("f;g")}] = counted(2);
	std::string path = ::testing::TempDir() + "vtice-folded.txt";
	std::ofstream(path) << folded(info, entries);
	std::string svg = test::command_output("perl '" + script + "' '" + path + "'");
	std::map<std::string, std::string> drawn;	// name -> samples (those checked are drawn once)
	std::regex title("<title>([^<]*) \\(([0-9,]+) samples?");
	for (std::sregex_iterator it(svg.begin(), svg.end(), title), end; it != end; ++it)
		drawn[(*it)[1]] = (*it)[2];
	EXPECT_EQ(drawn["all"], "17");
	EXPECT_EQ(drawn["dd"], "12");
	EXPECT_EQ(drawn["cat"], "3");
	EXPECT_EQ(drawn["read_zero"], "7");
	EXPECT_EQ(drawn["vfs_write"], "5");
	EXPECT_EQ(drawn["a\\x20b\\x3bc"], "2") << "the escaped comm stays one frame";
	EXPECT_EQ(drawn["f\\x3bg"], "2") << "a ';' in a name does not split it";
	EXPECT_EQ(drawn.count("g"), 0u);
	EXPECT_EQ(drawn.size(), 11u) << "all, 3 comms, do_syscall_64, ksys_read/write, vfs_read/write, read_zero, f;g";
}
