// vtice probe --list (console/probe_list.hpp): each point's arguments as
// the lookups give them (the tests' tables, written out from the kernel's
// declarations), with their registers, and why a point has none.
#include <gtest/gtest.h>

#include "../probes/probe_lookup.hpp"
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
	auto bad = list_point_args("syscall:nosuch", test_syscalls(), test_params(), test_syscall_params());
	ASSERT_FALSE(bad);
	EXPECT_NE(bad.error().message.find("nosuch"), std::string::npos) << bad.error().message;
}
