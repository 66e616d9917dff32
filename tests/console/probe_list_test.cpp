// vtice probe --list (console/probe_list.hpp): each point's arguments as
// the lookups give them (the tests' tables, written out from the kernel's
// declarations), with their registers, and why a point has none.
#include <gtest/gtest.h>

#include "../probes/probe_lookup.hpp"
#include "kallsyms_modules.hpp"
#include "probe_list.hpp"

using vtice::console::list_point_args;

TEST(ProbeList, EachPointsArgumentsWithTheirRegisters)
{
	auto listed = list_point_args("fn:do_sys_openat2, syscall:fstat, syscall:getpid:return", test_syscalls(),
				      test_params(), test_syscall_params());
	ASSERT_TRUE(listed) << listed.error().message;
	EXPECT_EQ(listed->text, "fn:do_sys_openat2 (its BTF)\n"
				"    arg0  int dfd\n"
				"    arg1  const char *filename\n"
				"    arg2  struct open_how *how\n"
				"syscall:fstat (the kernel's declaration)\n"
				"    arg0  unsigned int fd\n"
				"    arg1  struct stat __user *statbuf\n"
				"syscall:getpid:return (the kernel's declaration)\n"
				"    (it takes none)\n");
	EXPECT_TRUE(listed->complete);
}

TEST(ProbeList, WhatCannotBeReadByNameSaysWhy)
{
	auto listed = list_point_args("fn:seven, fn:by_value, fn:vfs_read:return, syscall:*, profile:hz:99, fn:nosuch",
				      test_syscalls(), test_params(), test_syscall_params());
	ASSERT_TRUE(listed) << listed.error().message;
	EXPECT_EQ(listed->text, "fn:seven (its BTF)\n"
				"    arg0  (type unknown) a\n"
				"    arg1  (type unknown) b\n"
				"    arg2  (type unknown) c\n"
				"    arg3  (type unknown) d\n"
				"    arg4  (type unknown) e\n"
				"    arg5  (type unknown) f\n"
				"          (type unknown) g  (past the sixth, on the stack: not readable)\n"
				"fn:by_value (its BTF)\n"
				"          struct timespec64 ts  (passed by value: not readable)\n"
				"fn:vfs_read:return\n"
				"    (none: at a return, retval; the arguments are gone)\n"
				"syscall:*\n"
				"    (none by name in syscall:*: read arg0..arg5)\n"
				"profile:hz:99\n"
				"    (none by name at this kind of point)\n"
				"fn:nosuch (its BTF)\n"
				"    (none by name: no function nosuch in the test table)\n");
	EXPECT_FALSE(listed->complete) << "fn:nosuch has none";
	auto bad = list_point_args("fn:vfs_read, syscall:nosuch", test_syscalls(), test_params(), test_syscall_params());
	ASSERT_FALSE(bad);
	EXPECT_EQ(bad.error().message.rfind("syscall:nosuch: ", 0), 0u) << "named first: " << bad.error().message;
	auto none = list_point_args(" , ,", test_syscalls(), test_params(), test_syscall_params());
	ASSERT_FALSE(none);
	EXPECT_NE(none.error().message.find("no probe point to list"), std::string::npos);
}

// A pattern's points may be more than one probe holds (64): each is listed.
// A long listing over a slow line says where it is before each point, and
// stops where the caller says (Ctrl-C), keeping what was listed.
TEST(ProbeList, ProgressNamesEachPointAndCanStopTheListing)
{
	std::vector<std::string> told;
	auto listed = list_point_args("fn:do_sys_openat2, syscall:fstat, syscall:getpid", test_syscalls(), test_params(),
				      test_syscall_params(), [&told](std::size_t i, std::size_t n, std::string_view point) {
					      told.push_back(std::to_string(i) + "/" + std::to_string(n) + " " +
							     std::string(point));
					      return i < 2;
				      });
	ASSERT_TRUE(listed) << listed.error().message;
	EXPECT_EQ(told, (std::vector<std::string>{"1/3 fn:do_sys_openat2", "2/3 syscall:fstat"}));
	EXPECT_EQ(listed->listed, 1u);
	EXPECT_EQ(listed->points, 3u);
	EXPECT_EQ(listed->text, "fn:do_sys_openat2 (its BTF)\n"
				"    arg0  int dfd\n"
				"    arg1  const char *filename\n"
				"    arg2  struct open_how *how\n");
	auto whole = list_point_args("syscall:fstat, syscall:getpid", test_syscalls(), test_params(),
				     test_syscall_params(), [](std::size_t, std::size_t, std::string_view) { return true; });
	ASSERT_TRUE(whole);
	EXPECT_EQ(whole->listed, whole->points);
}

TEST(ProbeList, MorePointsThanAProbeHoldsAreListed)
{
	std::string points;
	for (int i = 0; i < 100; i++)
		points += (i ? ", " : "") + std::string(i % 2 ? "syscall:read" : "fn:vfs_read");
	auto listed = list_point_args(points, test_syscalls(), test_params(), test_syscall_params());
	ASSERT_TRUE(listed) << listed.error().message;
	std::size_t blocks = 0;
	for (std::size_t at = 0; (at = listed->text.find("    arg2  size_t count\n", at)) != std::string::npos; at++)
		blocks++;
	EXPECT_EQ(blocks, 100u);
}

namespace {

using vtice::console::expand_point_patterns;

vtice::console::FunctionNames names_of(std::vector<std::string> functions)
{
	return [functions](std::string_view) -> vtice::Result<std::vector<std::string>> { return functions; };
}

std::string expanded(std::string_view points, const vtice::console::FunctionNames &names)
{
	auto out = expand_point_patterns(points, names);
	EXPECT_TRUE(out) << points << ": " << (out ? "" : out.error().message);
	return out ? *out : "";
}

}  // namespace

// Patterns match as the shell globs (fnmatch), NAME against each function's
// name in any module, MODULE:NAME against both; syscalls' by the x86-64
// table (read 0, readv 19, readlink 89, readahead 187, readlinkat 267).
TEST(ProbeList, PatternsBecomeThePointsTheyMatchInOrder)
{
	auto names = names_of({"msr:msr_open", "msr:msr_read", "vfs_read", "vfs_readv", "vfs_write"});
	EXPECT_EQ(expanded("fn:vfs_read*, syscall:openat", names), "fn:vfs_read, fn:vfs_readv, syscall:openat");
	EXPECT_EQ(expanded("fn:*_read:return", names), "fn:msr:msr_read:return, fn:vfs_read:return");
	EXPECT_EQ(expanded("fn:msr:*", names), "fn:msr:msr_open, fn:msr:msr_read");
	EXPECT_EQ(expanded("fn:m?r:msr_o[pq]en", names), "fn:msr:msr_open");
	EXPECT_EQ(expanded(" syscall:read* ", names),
		  "syscall:read, syscall:readv, syscall:readlink, syscall:readahead, syscall:readlinkat");
	EXPECT_EQ(expanded("fn:vfs_write, profile:hz:99", names), "fn:vfs_write, profile:hz:99")
		<< "points without a pattern stay as they are";
}

TEST(ProbeList, PatternsThatMatchNothingOrTooMuchAreRefused)
{
	auto names = names_of({"vfs_read"});
	auto none = expand_point_patterns("fn:vfs_read, fn:nosuch*", names);
	ASSERT_FALSE(none);
	EXPECT_EQ(none.error().message, "no function matches fn:nosuch*");
	auto no_syscall = expand_point_patterns("syscall:zz*", names);
	ASSERT_FALSE(no_syscall);
	EXPECT_EQ(no_syscall.error().message, "no syscall matches syscall:zz*");
	std::vector<std::string> many;
	for (int i = 0; i <= 5000; i++)
		many.push_back("f" + std::to_string(i));
	auto too_many = expand_point_patterns("fn:f*", names_of(many));
	ASSERT_FALSE(too_many);
	EXPECT_NE(too_many.error().message.find("more than 5000 points"), std::string::npos);
	bool asked = false;
	auto unread = expand_point_patterns("syscall:open*, fn:vfs_read", [&asked](std::string_view) -> vtice::Result<std::vector<std::string>> {
		asked = true;
		return vtice::make_error("kallsyms unreadable");
	});
	EXPECT_TRUE(unread);
	EXPECT_FALSE(asked) << "the functions are read for a fn: pattern only";
	auto failed = expand_point_patterns("fn:vfs_*", [](std::string_view) -> vtice::Result<std::vector<std::string>> {
		return vtice::make_error("kallsyms unreadable");
	});
	ASSERT_FALSE(failed);
	EXPECT_EQ(failed.error().message, "kallsyms unreadable");
}

// kallsyms's functions as fn: points spell them: each once, a module's
// qualified, no data and no compiler-split part.
TEST(ProbeList, KallsymsFunctionNamesAreFnPointsSpelling)
{
	const char *kallsyms = "ffffffff81000000 T _text\n"
			       "ffffffff81000100 t vfs_read\n"
			       "ffffffff81000200 t vfs_read.cold\n"
			       "ffffffff81000300 t vfs_read\n"
			       "ffffffff82000000 D jiffies_64\n"
			       "ffffffffc0a01000 t msr_read\t[msr]\n"
			       "ffffffffc0a02000 t msr_read\n";
	EXPECT_EQ(vtice::console::text_function_names(kallsyms),
		  (std::vector<std::string>{"_text", "msr:msr_read", "msr_read", "vfs_read"}));
}

// The kernel's init functions are freed after boot, though kallsyms names
// them (vfs_caches_init is __init): no probe point, so no pattern's match.
TEST(ProbeList, TheKernelsInitFunctionsAreNoPoints)
{
	const char *kallsyms = "ffffffff81000100 T vfs_read\n"
			       "ffffffff83000000 T _sinittext\n"
			       "ffffffff83000100 t vfs_caches_init\n"
			       "ffffffff83100000 T _einittext\n"
			       "ffffffff83200000 t vfs_after_init\n"
			       "ffffffffc0a01000 t vfs_in_module\t[mod]\n";
	EXPECT_EQ(vtice::console::text_function_names(kallsyms),
		  (std::vector<std::string>{"_einittext", "mod:vfs_in_module", "vfs_after_init", "vfs_read"}));
}
