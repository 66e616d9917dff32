// x86-64 syscall names (generated at build time from the kernel's uapi
// asm/unistd_64.h, see CMakeLists.txt) and how many arguments a line shows.
#include "syscall_events.hpp"

#include <string_view>
#include <unordered_map>

namespace vtice::trace {

namespace {

struct NamedNr {
	uint64_t nr;
	const char *name;
};

constexpr NamedNr kNames[] = {
#include "syscall_names.inc"
};

// Argument counts of common syscalls (their prototypes in the kernel's
// include/linux/syscalls.h); anything else shows all six registers.
const std::unordered_map<std::string_view, unsigned> &arities()
{
	static const std::unordered_map<std::string_view, unsigned> table = {
		{"read", 3}, {"write", 3}, {"open", 3}, {"close", 1}, {"stat", 2}, {"fstat", 2},
		{"lstat", 2}, {"poll", 3}, {"lseek", 3}, {"mmap", 6}, {"mprotect", 3},
		{"munmap", 2}, {"brk", 1}, {"rt_sigaction", 4}, {"rt_sigprocmask", 4},
		{"rt_sigreturn", 0}, {"ioctl", 3}, {"pread64", 4}, {"pwrite64", 4}, {"readv", 3},
		{"writev", 3}, {"access", 2}, {"pipe", 1}, {"select", 5}, {"sched_yield", 0},
		{"mremap", 5}, {"madvise", 3}, {"dup", 1}, {"dup2", 2}, {"pause", 0},
		{"nanosleep", 2}, {"getpid", 0}, {"socket", 3}, {"connect", 3}, {"accept", 3},
		{"sendto", 6}, {"recvfrom", 6}, {"clone", 5}, {"fork", 0}, {"vfork", 0},
		{"execve", 3}, {"exit", 1}, {"wait4", 4}, {"kill", 2}, {"uname", 1},
		{"fcntl", 3}, {"fsync", 1}, {"getcwd", 2}, {"chdir", 1}, {"rename", 2},
		{"mkdir", 2}, {"rmdir", 1}, {"unlink", 1}, {"readlink", 3}, {"umask", 1},
		{"getuid", 0}, {"getgid", 0}, {"geteuid", 0}, {"getegid", 0}, {"getppid", 0},
		{"getpgrp", 0}, {"setsid", 0}, {"gettid", 0}, {"futex", 6}, {"getdents64", 3},
		{"set_tid_address", 1}, {"clock_gettime", 2}, {"clock_nanosleep", 4},
		{"exit_group", 1}, {"tgkill", 3}, {"openat", 4}, {"mkdirat", 3},
		{"newfstatat", 4}, {"unlinkat", 3}, {"readlinkat", 4}, {"faccessat", 3},
		{"pselect6", 6}, {"ppoll", 5}, {"set_robust_list", 2}, {"pipe2", 2},
		{"dup3", 3}, {"prlimit64", 4}, {"getrandom", 3}, {"memfd_create", 2},
		{"statx", 5}, {"rseq", 4}, {"clone3", 2}, {"close_range", 3}, {"openat2", 4},
		{"faccessat2", 4}, {"arch_prctl", 2}, {"prctl", 5}, {"sysinfo", 1},
		{"getrusage", 2}, {"times", 1}, {"epoll_wait", 4}, {"epoll_ctl", 4},
		{"epoll_create1", 1}, {"eventfd2", 2}, {"sendmsg", 3}, {"recvmsg", 3},
		{"bind", 3}, {"listen", 2}, {"shutdown", 2}, {"getsockname", 3},
		{"setsockopt", 5}, {"getsockopt", 5}, {"chmod", 2}, {"fchmod", 2},
		{"chown", 3}, {"truncate", 2}, {"ftruncate", 2}, {"sync", 0},
	};
	return table;
}

}  // namespace

std::string syscall_name(uint64_t nr)
{
	for (const auto &n : kNames)
		if (n.nr == nr)
			return n.name;
	return "syscall_" + std::to_string(nr);
}

std::optional<uint64_t> syscall_number(std::string_view name)
{
	for (const auto &n : kNames)
		if (name == n.name)
			return n.nr;
	return std::nullopt;
}

unsigned syscall_arity(uint64_t nr)
{
	for (const auto &n : kNames) {
		if (n.nr != nr)
			continue;
		auto it = arities().find(n.name);
		return it == arities().end() ? 6 : it->second;
	}
	return 6;
}

}  // namespace vtice::trace
