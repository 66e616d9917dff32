#include "ftrace_oracle.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "processes.hpp"
#include "vtice/read_input.hpp"

namespace vtice::console::doctor {

namespace {

constexpr std::size_t kMaxTrace = 64u << 20;  // one openat is ~150 KB

std::string tracefs_dir()
{
	for (const char *dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
		if (access((std::string(dir) + "/trace").c_str(), F_OK) == 0)
			return dir;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0)
		return "/sys/kernel/tracing";
	return "";
}

class Tracefs {
public:
	explicit Tracefs(std::string dir) : dir_(std::move(dir)) {}

	std::string read(const char *file) const { return read_text(dir_ + "/" + file); }
	// O_TRUNC empties a pid list or the trace buffer.
	bool write(const char *file, const std::string &value) const
	{
		int fd = open((dir_ + "/" + file).c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (fd < 0)
			return false;
		bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
		close(fd);
		return ok;
	}
	void clear(const char *file) const { write(file, ""); }
	const std::string &dir() const { return dir_; }

private:
	std::string dir_;
};

std::string first_line(std::string text) { return text.substr(0, text.find('\n')); }

void open_once(const std::string &path)
{
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
}

// tracing_on opened before and written through the same descriptor after:
// the trace holds no openat but the oracle's.
void record_openats(const Tracefs &fs, const std::string &path)
{
	int on = open((fs.dir() + "/tracing_on").c_str(), O_WRONLY | O_CLOEXEC);
	if (on < 0)
		return;
	if (::write(on, "1", 1) == 1)
		for (int i = 0; i < kOracleCalls; i++)
			open_once(path);
	if (::write(on, "0", 1) != 1)
		fs.write("tracing_on", "0");
	close(on);
}

}  // namespace

Result<std::string> ftrace_openats(const std::string &path)
{
	std::string dir = tracefs_dir();
	if (dir.empty())
		return Error{"no tracefs (/sys/kernel/tracing): the kernel has no ftrace, or it cannot be mounted"};
	Tracefs fs(dir);
	if (fs.read("available_tracers").find("function_graph") == std::string::npos)
		return Error{"this kernel has no function_graph tracer (CONFIG_FUNCTION_GRAPH_TRACER)"};
	std::string tracer = first_line(fs.read("current_tracer"));
	if (tracer != "nop")
		return Error{"ftrace is busy (current_tracer is " + tracer + "): left alone"};
	std::string was_on = first_line(fs.read("tracing_on"));
	open_once(path);  // warm the path: the traced call takes the cached one
	open_once(path);
	// Every function of this process, not set_graph_function: releasing that
	// file after a write WARNs in ftrace_match_record() on Debian's 6.1.
	bool ready = fs.write("tracing_on", "0") && fs.write("set_ftrace_pid", std::to_string(getpid())) &&
		     fs.write("current_tracer", "function_graph");
	std::string text;
	if (ready) {
		fs.clear("trace");
		record_openats(fs, path);
		auto read = read_input(fs.dir() + "/trace", kMaxTrace);
		if (read)
			text.assign(read->begin(), read->end());
	}
	fs.write("current_tracer", "nop");
	fs.clear("set_ftrace_pid");
	fs.clear("trace");
	fs.write("tracing_on", was_on.empty() ? "1" : was_on);
	if (!ready)
		return Error{"ftrace refused the function_graph set-up in " + dir};
	if (text.empty())
		return Error{"ftrace recorded nothing"};
	return text;
}

}  // namespace vtice::console::doctor
