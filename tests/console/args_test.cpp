#include <gtest/gtest.h>

#include "args.hpp"

using namespace vtice::console;

namespace {

ParsedArgs parse_ok(std::vector<std::string> words, const std::vector<OptionSpec> &specs)
{
	std::vector<char *> argv;
	for (auto &w : words)
		argv.push_back(w.data());
	auto parsed = parse_args(static_cast<int>(argv.size()), argv.data(), specs);
	EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message);
	return parsed.ok() ? *parsed : ParsedArgs{};
}

std::string parse_error(std::vector<std::string> words, const std::vector<OptionSpec> &specs)
{
	std::vector<char *> argv;
	for (auto &w : words)
		argv.push_back(w.data());
	auto parsed = parse_args(static_cast<int>(argv.size()), argv.data(), specs);
	return parsed.ok() ? "" : parsed.error().message;
}

const std::vector<OptionSpec> kSpecs = {{"--format", true}, {"--quiet", false}};

}  // namespace

TEST(ParseArgs, SeparatesOptionsFromPositionals)
{
	auto args = parse_ok({"report", "a.trace", "--format", "folded", "--quiet", "b"}, kSpecs);
	EXPECT_EQ(args.positional, (std::vector<std::string>{"a.trace", "b"}));
	EXPECT_EQ(args.get("--format"), "folded");
	EXPECT_TRUE(args.has("--quiet"));
}

TEST(ParseArgs, AcceptsInlineValueAndHelp)
{
	auto args = parse_ok({"report", "--format=graph", "-h"}, kSpecs);
	EXPECT_EQ(args.get("--format"), "graph");
	EXPECT_TRUE(args.help);
}

TEST(ParseArgs, DoubleDashEndsOptions)
{
	auto args = parse_ok({"syms", "--", "--quiet"}, kSpecs);
	EXPECT_EQ(args.positional, (std::vector<std::string>{"--quiet"}));
	EXPECT_FALSE(args.has("--quiet"));
}

TEST(ParseArgs, NegativeNumbersArePositional)
{
	auto args = parse_ok({"syms", "-0x10"}, kSpecs);
	EXPECT_EQ(args.positional, (std::vector<std::string>{"-0x10"}));
}

TEST(ParseArgs, BadOptionsAreNamed)
{
	EXPECT_EQ(parse_error({"x", "--bogus"}, kSpecs), "unknown option '--bogus'");
	EXPECT_EQ(parse_error({"x", "--format"}, kSpecs), "option '--format' needs a value");
	EXPECT_EQ(parse_error({"x", "--quiet=1"}, kSpecs), "option '--quiet' takes no value");
}

TEST(ParseHex, AcceptsPrefixAndSign)
{
	EXPECT_EQ(*parse_hex("0x10"), 16);
	EXPECT_EQ(*parse_hex("ff"), 255);
	EXPECT_EQ(*parse_hex("-0x10"), -16);
	EXPECT_FALSE(parse_hex("0x").ok());
	EXPECT_FALSE(parse_hex("12g").ok());
	EXPECT_FALSE(parse_hex("1ffffffffffffffff").ok());
}

// Every command's counts and seconds go through one parser: what one
// command refuses, all refuse (trace syscall once took "1e3" and "0x10").
TEST(OptionNumbers, AbsentGivesTheFallbackAndBadTextIsRefusedByName)
{
	const std::vector<OptionSpec> specs = {{"--timeout", true}, {"--count", true}};
	auto none = parse_ok({"x"}, specs);
	EXPECT_EQ(*seconds_option(none, "--timeout", 2.5, 1e7), 2.5);
	EXPECT_EQ(*count_option(none, "--count", 7, 1, 100), 7u);
	auto good = parse_ok({"x", "--timeout", "0.5", "--count", "100"}, specs);
	EXPECT_EQ(*seconds_option(good, "--timeout", 0, 1e7), 0.5);
	EXPECT_EQ(*count_option(good, "--count", 1, 1, 100), 100u);
	for (const char *bad : {"1e3", "0x10", "inf", "nan", "-1", "0", "", "1.2.3"}) {
		auto args = parse_ok({"x", "--timeout", bad, "--count", bad}, specs);
		auto seconds = seconds_option(args, "--timeout", 0, 1e7);
		auto count = count_option(args, "--count", 1, 1, 100);
		ASSERT_FALSE(seconds.ok()) << bad;
		ASSERT_FALSE(count.ok()) << bad;
		EXPECT_NE(seconds.error().message.find("--timeout '" + std::string(bad) + "'"), std::string::npos);
		EXPECT_NE(count.error().message.find("--count '" + std::string(bad) + "'"), std::string::npos);
	}
	auto big = parse_ok({"x", "--count", "101"}, specs);
	EXPECT_FALSE(count_option(big, "--count", 1, 1, 100).ok());
}
