// libFuzzer target: `vtice syms FILE QUERY...` as the command line runs it,
// on whole files: the input becomes a file (in memory, by memfd), loaded
// through the bounded reader, content detection and every loader, then
// names and addresses are resolved and printed. The queries are a known
// name, a kernel address, a 64-bit-overflowing address and the input's own
// first line, so its symbols can be asked for by name. The output goes to
// /dev/null; exit codes are the CLI's (usage, failure, partial) and any is fine.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace vtice::console {
int cmd_syms(int argc, char **argv);  // console/cmd_syms.cpp
}

namespace {

int memory_file()
{
	static int fd = -1;
	if (fd < 0) {
		fd = memfd_create("vtice-syms-fuzz", 0);
		// cmd_syms prints to stdout and stderr. stdout goes to /dev/null;
		// the C library's stderr stream is swapped for another /dev/null
		// stream, which leaves fd 2, where libFuzzer and the sanitizers
		// report, untouched (libFuzzer kept its own FILE pointer at start).
		FILE *null = std::fopen("/dev/null", "w");
		if (!null || !std::freopen("/dev/null", "w", stdout))
			__builtin_trap();
		stderr = null;
	}
	return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	int fd = memory_file();
	if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
		return 0;
	std::string path = "/proc/self/fd/" + std::to_string(fd);
	std::string_view text(reinterpret_cast<const char *>(data), size);
	std::string first_line(text.substr(0, std::min<std::size_t>(text.find('\n'), 64)));
	std::string name = first_line.empty() ? "startup_64" : first_line;
	const char *argv[] = {"syms", path.c_str(), "do_sys_openat2", "0xffffffff81000010",
			      "0x1ffffffff81000010", name.c_str(), nullptr};
	(void)vtice::console::cmd_syms(6, const_cast<char **>(argv));
	return 0;
}
