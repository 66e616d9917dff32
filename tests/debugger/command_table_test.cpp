// The command table: every command documented, names and aliases unique,
// multi-word names found by their longest match.
#include <gtest/gtest.h>

#include <set>

#include "commands/command.hpp"

using namespace vtice::dbg;

TEST(CommandTable, EveryCommandHasHelpAndUniqueNames)
{
	std::set<std::string> names;
	for (const Command &c : command_table()) {
		EXPECT_TRUE(c.usage && *c.usage) << c.name;
		EXPECT_TRUE(c.summary && *c.summary) << c.name;
		EXPECT_TRUE(c.help && std::string(c.help).size() > 20) << c.name;
		EXPECT_TRUE(c.run) << c.name;
		EXPECT_TRUE(names.insert(c.name).second) << "duplicate " << c.name;
		for (const char *a : c.aliases)
			EXPECT_TRUE(names.insert(a).second) << "duplicate alias " << a;
	}
	// gdb names and WinDbg/SoftICE aliases the task asks for.
	for (const char *n : {"break", "continue", "step", "next", "finish", "stepi", "bt", "x", "info registers",
			      "info breakpoints", "delete", "disas", "watch", "detach", "bp", "g", "t", "p", "k",
			      "u", "r", "condition", "ignore", "commands", "rwatch", "awatch"})
		EXPECT_TRUE(names.count(n)) << n;
}

TEST(CommandTable, LongestMatch)
{
	std::size_t consumed = 0;
	const Command *c = find_command({"info", "registers", "rip"}, consumed);
	ASSERT_NE(c, nullptr);
	EXPECT_STREQ(c->name, "info registers");
	EXPECT_EQ(consumed, 2u);
	c = find_command({"bp", "do_sys_openat2"}, consumed);
	ASSERT_NE(c, nullptr);
	EXPECT_STREQ(c->name, "break");
	EXPECT_EQ(consumed, 1u);
	EXPECT_EQ(find_command({"frobnicate"}, consumed), nullptr);
}
