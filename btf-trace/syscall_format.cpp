// One strace-like line per call (syscall_events.hpp).
#include "syscall_events.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "vtice/escape.hpp"

namespace vtice::trace {

namespace {

// Small values read best in decimal (fds, AT_FDCWD = -100, sizes), others in hex.
std::string format_arg(uint64_t v)
{
	char buf[32];
	auto s = static_cast<int64_t>(v);
	if (s > -4096 && s < 4096)
		std::snprintf(buf, sizeof(buf), "%" PRId64, s);
	else
		std::snprintf(buf, sizeof(buf), "%#" PRIx64, v);
	return buf;
}

std::string format_return(uint64_t v)
{
	auto s = static_cast<int64_t>(v);
	char buf[160];
	if (s < 0 && s >= -4095) {
		int err = static_cast<int>(-s);
		const char *name = strerrorname_np(err);
		std::snprintf(buf, sizeof(buf), "-1 %s (%s)", name ? name : std::to_string(err).c_str(),
			      std::strerror(err));
	} else if (v > 0xffffffffull) {
		std::snprintf(buf, sizeof(buf), "%#" PRIx64, v);
	} else {
		std::snprintf(buf, sizeof(buf), "%" PRId64, s);
	}
	return buf;
}

std::string format_task(const SyscallEvent &ev)
{
	if (!ev.has_task)
		return "?(?)";
	return escape_text(ev.comm, Layout::Field) + "(" + std::to_string(ev.pid) + ")";
}

}  // namespace

std::string format_syscall_call(const SyscallCall &call)
{
	const SyscallEvent &any = call.enter ? *call.enter : *call.exit;
	std::string line = format_task(any.has_task || !call.exit ? any : *call.exit) + " ";
	if (call.enter) {
		const SyscallEvent &e = *call.enter;
		line += syscall_name(e.nr) + "(";
		unsigned n = syscall_arity(e.nr);
		for (unsigned i = 0; i < n; i++)
			line += (i ? ", " : "") + format_arg(e.args[i]);
		line += ")";
	} else {
		line += "<... resumed>";
	}
	line += " = ";
	line += call.exit ? format_return(call.exit->ret) : "? <unfinished>";
	return line;
}

}  // namespace vtice::trace
