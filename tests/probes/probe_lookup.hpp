// A syscall table for the tests, written out from the x86-64 ABI
// (arch/x86/entry/syscalls/syscall_64.tbl), not taken from the code under test.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker.hpp"

inline vtice::probes::SyscallLookup test_syscalls()
{
	return [](std::string_view name) -> std::optional<std::uint64_t> {
		static const std::map<std::string, std::uint64_t, std::less<>> table = {
			{"read", 0},	{"write", 1},	 {"open", 2},	  {"close", 3},	  {"stat", 4},	 {"fstat", 5},
			{"lstat", 6},	{"poll", 7},	 {"lseek", 8},	  {"nanosleep", 35}, {"getpid", 39}, {"execve", 59},
			{"openat", 257},
		};
		auto it = table.find(name);
		if (it == table.end())
			return std::nullopt;
		return it->second;
	};
}

// Parameters for args->NAME, written out from the kernel's declarations
// (fs/open.c, fs/namei.c, fs/read_write.c), not from any BTF; "seven"
// and "by_value" are made up for the refusals.
inline vtice::probes::ParamLookup test_params()
{
	using vtice::probes::Param;
	return [](std::string_view function) -> vtice::Result<std::vector<Param>> {
		static const std::map<std::string, std::vector<Param>, std::less<>> table = {
			{"do_sys_openat2", {{"dfd", 4, true, "int"}, {"filename", 8, false, "const char *"},
					    {"how", 8, false, "struct open_how *"}}},
			{"vfs_read", {{"file", 8, false, "struct file *"}, {"buf", 8, false, "char *"},
				      {"count", 8, false, "size_t"}, {"pos", 8, false, "loff_t *"}}},
			{"vfs_write", {{"file", 8, false, "struct file *"}, {"buf", 8, false, "const char *"},
				       {"count", 8, false, "size_t"}, {"pos", 8, false, "loff_t *"}}},
			{"ksys_write", {{"fd", 4, false, "unsigned int"}, {"buf", 8, false, "const char *"},
					{"count", 8, false, "size_t"}}},
			{"getname_flags", {{"filename", 8, false, "const char *"}, {"flags", 4, true, "int"},
					   {"empty", 8, false, "int *"}}},
			{"seven", {{"a", 8}, {"b", 8}, {"c", 8}, {"d", 8}, {"e", 8}, {"f", 8}, {"g", 8}}},
			{"by_value", {{"ts", 0, false, "struct timespec64"}}},
		};
		auto it = table.find(function);
		if (it == table.end())
			return vtice::make_error("no function " + std::string(function) + " in the test table");
		return it->second;
	};
}

// Syscalls' parameters for args->NAME in syscall: probes, by number,
// written out from their SYSCALL_DEFINEs (fs/read_write.c, fs/open.c,
// fs/stat.c: number 5, fstat, is the kernel's newfstat), not from any
// kernel's memory; getpid takes none.
inline vtice::probes::SyscallParamLookup test_syscall_params()
{
	using vtice::probes::Param;
	return [](std::uint64_t nr, std::string_view name) -> vtice::Result<std::vector<Param>> {
		static const std::map<std::uint64_t, std::vector<Param>> table = {
			{0, {{"fd", 4, false, "unsigned int"}, {"buf", 8, false, "char __user *"},
			     {"count", 8, false, "size_t"}}},
			{1, {{"fd", 4, false, "unsigned int"}, {"buf", 8, false, "const char __user *"},
			     {"count", 8, false, "size_t"}}},
			{2, {{"filename", 8, false, "const char __user *"}, {"flags", 4, true, "int"},
			     {"mode", 2, false, "umode_t"}}},
			{5, {{"fd", 4, false, "unsigned int"}, {"statbuf", 8, false, "struct stat __user *"}}},
			{39, {}},
			{257, {{"dfd", 4, true, "int"}, {"filename", 8, false, "const char __user *"},
			       {"flags", 4, true, "int"}, {"mode", 2, false, "umode_t"}}},
		};
		auto it = table.find(nr);
		if (it == table.end())
			return vtice::make_error("no declaration of " + std::string(name) + " in the test table");
		return it->second;
	};
}
