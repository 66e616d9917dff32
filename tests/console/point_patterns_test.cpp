// Patterns in a program's points (console/point_patterns.hpp): each fn:
// or syscall: pattern becomes the points it matches, in order, where the
// pattern was written, as bpftrace expands kprobe:vfs_*; what cannot be
// expanded is refused at the pattern's position.
#include <gtest/gtest.h>

#include "parser.hpp"
#include "point_patterns.hpp"

using namespace vtice;
using vtice::console::expand_program_patterns;

namespace {

// names whichever modules are asked for; asked counts the questions,
// modules records the module patterns they were asked with.
console::FunctionNames functions(std::vector<std::string> names, int *asked = nullptr,
				 std::vector<std::string> *modules = nullptr)
{
	return [names, asked, modules](std::string_view module) -> Result<std::vector<std::string>> {
		if (asked)
			++*asked;
		if (modules)
			modules->emplace_back(module);
		return names;
	};
}

std::vector<std::string> point_texts(const probes::Probe &probe)
{
	std::vector<std::string> out;
	for (const probes::ProbePoint &p : probe.points)
		out.push_back(p.text);
	return out;
}

}  // namespace

TEST(PointPatterns, EachPatternBecomesItsMatchesWhereItWasWritten)
{
	auto program = probes::parse_program("BEGIN { exit(); }\n"
					     "fn:vfs_r*, fn:ksys_read, fn:msr:*_open:return { @[func] = count(); }\n"
					     "syscall:pread*, syscall:* { @[probe] = count(); }");
	ASSERT_TRUE(program) << program.error().message;
	int asked = 0;
	auto ok = expand_program_patterns(
		*program, functions({"ksys_read", "msr:msr_open", "msr:msr_read", "vfs_read", "vfs_readv", "vfs_write"},
				    &asked));
	ASSERT_TRUE(ok) << ok.error().message;
	EXPECT_EQ(asked, 1) << "the functions are read once";
	const auto &probes = program->probes;
	EXPECT_EQ(point_texts(probes[0]), std::vector<std::string>{"BEGIN"});
	EXPECT_EQ(point_texts(probes[1]), (std::vector<std::string>{"fn:vfs_read", "fn:vfs_readv", "fn:ksys_read",
								      "fn:msr:msr_open:return"}));
	EXPECT_EQ(point_texts(probes[2]),
		  (std::vector<std::string>{"syscall:pread64", "syscall:preadv", "syscall:preadv2", "syscall:*"}))
		<< "syscall:* stays every syscall's one point";
	EXPECT_EQ(probes[1].points[1].pos.column, 1u) << "the pattern's position";
	EXPECT_EQ(probes[1].points[2].pos.column, 12u);
}

TEST(PointPatterns, NoFunctionsAreAskedForWithoutAPattern)
{
	auto program = probes::parse_program("fn:vfs_read, syscall:openat { exit(); }");
	ASSERT_TRUE(program);
	int asked = 0;
	ASSERT_TRUE(expand_program_patterns(*program, functions({}, &asked)));
	EXPECT_EQ(asked, 0);
	EXPECT_EQ(point_texts(program->probes[0]), (std::vector<std::string>{"fn:vfs_read", "syscall:openat"}));
	ASSERT_TRUE(expand_program_patterns(*program, {})) << "no list needed";
}

TEST(PointPatterns, WhatCannotBeExpandedIsRefusedAtThePattern)
{
	auto refusal = [](const std::string &source, const console::FunctionNames &names) {
		auto program = probes::parse_program(source);
		EXPECT_TRUE(program) << source;
		auto ok = expand_program_patterns(*program, names);
		EXPECT_FALSE(ok) << source;
		return ok ? std::string() : std::to_string(ok.error().offset.value_or(~0ul)) + ": " + ok.error().message;
	};
	EXPECT_EQ(refusal("BEGIN { exit(); } fn:nosuch* { exit(); }", functions({"vfs_read"})),
		  "18: no function matches fn:nosuch*");
	EXPECT_EQ(refusal("fn:vfs_* { exit(); }", {}).rfind("0: fn:vfs_* is a pattern, and there is no list", 0), 0u);
	std::vector<std::string> many;
	for (int i = 0; i < 65; i++)
		many.push_back("f" + std::to_string(i));
	std::string past = refusal("fn:f1, fn:f* { exit(); }", functions(many));
	EXPECT_EQ(past.rfind("7: fn:f* makes this probe more than 64 points", 0), 0u) << past;
	auto failing = [](std::string_view) -> Result<std::vector<std::string>> {
		return make_error("kallsyms: permission denied");
	};
	EXPECT_EQ(refusal("fn:vfs_* { exit(); }", failing), "0: kallsyms: permission denied");
}

// Patterns are names, numbers, '*', '?' and brackets written together;
// anything apart is the program's own syntax.
TEST(PointPatterns, APatternIsWrittenWithoutSpaces)
{
	auto program = probes::parse_program("fn:*open*, fn:vfs_*:return, fn:msr:* { exit(); }");
	ASSERT_TRUE(program) << program.error().message;
	EXPECT_EQ(point_texts(program->probes[0]),
		  (std::vector<std::string>{"fn:*open*", "fn:vfs_*:return", "fn:msr:*"}));
	EXPECT_FALSE(probes::parse_program("fn:vfs_ * { exit(); }"));
	auto shell = probes::parse_program("fn:[kv]free, fn:vfs_read?, fn:x[!a-f0-9]_*64, fn:? { exit(); }");
	ASSERT_TRUE(shell) << shell.error().message;
	EXPECT_EQ(point_texts(shell->probes[0]),
		  (std::vector<std::string>{"fn:[kv]free", "fn:vfs_read?", "fn:x[!a-f0-9]_*64", "fn:?"}));
	EXPECT_FALSE(probes::parse_program("fn:vfs_read ? { exit(); }"));
	auto offset = probes::parse_program("addr:vfs_read+4 { exit(); }");
	ASSERT_TRUE(offset);
	EXPECT_EQ(offset->probes[0].points[0].text, "addr:vfs_read+4");
}

// '?' and '[...]' match as the shell's do, as in --list.
TEST(PointPatterns, QuestionMarksAndBracketsMatchAsTheShellsDo)
{
	auto program = probes::parse_program("fn:[kv]free, fn:vfs_read?, fn:ksys_[!r]* { exit(); }");
	ASSERT_TRUE(program) << program.error().message;
	ASSERT_TRUE(expand_program_patterns(
		*program, functions({"kfree", "ksys_read", "ksys_write", "kvfree", "vfree", "vfs_read", "vfs_readv"})));
	EXPECT_EQ(point_texts(program->probes[0]),
		  (std::vector<std::string>{"fn:kfree", "fn:vfree", "fn:vfs_readv", "fn:ksys_write"}));
}

// A pattern naming its module asks for that module's functions only (over
// a serial line the others' symbols take seconds each); one without asks
// for every function, once.
TEST(PointPatterns, AModulesPatternAsksForThatModulesFunctionsOnly)
{
	auto program = probes::parse_program("fn:msr:* { exit(); } fn:ms?:msr_read, fn:vfs_*, fn:cpu*:* { exit(); }");
	ASSERT_TRUE(program) << program.error().message;
	int asked = 0;
	std::vector<std::string> modules;
	ASSERT_TRUE(
		expand_program_patterns(*program, functions({"msr:msr_open", "msr:msr_read", "vfs_read", "cpuid:cpuid_open"},
							    &asked, &modules)));
	EXPECT_EQ(modules, (std::vector<std::string>{"msr", "ms?", ""})) << "fn:cpu*:* uses every function, asked already";
	EXPECT_EQ(point_texts(program->probes[1]),
		  (std::vector<std::string>{"fn:msr:msr_read", "fn:vfs_read", "fn:cpuid:cpuid_open"}));
}
