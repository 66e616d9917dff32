#include "trace_common.hpp"

#include <time.h>

#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "device.hpp"
#include "vtice/read_input.hpp"
#include "vtice/interrupts.hpp"

namespace vtice::console {

Result<TaskFilter> parse_task_filter(const ParsedArgs &args)
{
	TaskFilter f;
	f.comm = args.get("--comm").value_or("");
	if (f.comm.size() > 15)
		return make_error("--comm " + f.comm + ": a comm has at most 15 characters");
	if (auto pid = args.get("--pid")) {
		char *end = nullptr;
		unsigned long v = std::strtoul(pid->c_str(), &end, 10);
		if (pid->empty() || *end || v == 0 || v > 0x3fffffff)
			return make_error("--pid " + *pid + ": not a process id");
		f.pid = static_cast<std::uint32_t>(v);
	}
	return f;
}

std::string describe_filter(const TaskFilter &filter)
{
	std::string f;
	if (!filter.comm.empty())
		f += "comm " + filter.comm;
	if (filter.pid)
		f += (f.empty() ? "" : ", ") + std::string("pid ") + std::to_string(filter.pid);
	return f.empty() ? "every task" : f;
}

const char *describe_mechanism(std::uint32_t mechanism)
{
	switch (mechanism) {
	case VTICE_TRACE_MTF:
		return "monitor trap flag: one VM exit per instruction";
	case VTICE_TRACE_TF:
		return "TF steps: one VM exit per instruction (DEBUGCTL.BTF not honoured)";
	case VTICE_TRACE_BTF:
		return "TF + DEBUGCTL.BTF: one VM exit per taken branch";
	default:
		return "an unknown mechanism (a newer module?)";
	}
}

const char *describe_stepping(std::uint32_t stepping)
{
	if (stepping == VTICE_PATH_STEP_TASK)
		return "stepping only the CPU the traced task runs on";
	return "stepping every CPU while a call is traced";
}

void catch_stop_signals()
{
	interrupts::install();
}

bool stop_requested()
{
	return interrupts::ctrl_c_count() != 0 || interrupts::end_signal() != 0;
}

int exit_status(int status)
{
	return interrupts::end_signal() ? 128 + interrupts::end_signal() : status;
}

void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&ts, nullptr);	// a signal ends it early, which is the point
}

Error trap_error(const std::string &path, const char *ioctl_name, int err)
{
	if (err == EBUSY)
		return make_error(path + ": another 'vtice trace syscalls', 'vtice trace syscall' or 'vtice probe', "
					 "or a debugger's probe through the stub, owns the syscall events");
	if (err == EOPNOTSUPP)
		return make_error(path + ": no CPU can trap syscalls, or there is no tracer: the hypervisor "
					 "needs the VM-entry control \"load IA32_EFER\", CR4.CET clear, and for "
					 "'trace syscall' the monitor trap flag or TF steps (docs/tracing.md)");
	return ioctl_error(path, ioctl_name, err);
}

Result<vtice_syscalls> syscalls_request(std::uint32_t op, const TaskFilter &filter, const SyscallStrings &strings,
					const SyscallNumbers &numbers)
{
	auto req = request<vtice_syscalls>();
	req.op = op;
	req.pid = filter.pid;
	std::memcpy(req.comm, filter.comm.data(), std::min(filter.comm.size(), sizeof(req.comm) - 1));
	if (strings.size() > VTICE_SYSCALL_STRINGS_MAX)
		return make_error("str() in " + std::to_string(strings.size()) + " syscalls: the hypervisor copies "
				  "strings for " + std::to_string(VTICE_SYSCALL_STRINGS_MAX) + " at most");
	std::size_t slot = 0;
	for (const auto &[nr, arg] : strings) {
		req.str_nr[slot] = static_cast<std::uint16_t>(nr);
		req.str_arg[slot++] = static_cast<std::uint8_t>(arg + 1);
	}
	constexpr std::uint64_t kSetSize = 64 * VTICE_SYSCALL_NR_WORDS;
	if (numbers.empty() || *numbers.rbegin() >= kSetSize)
		return req;
	req.flags |= VTICE_SYSCALLS_CHOSEN;
	for (std::uint64_t nr : numbers)
		req.nrs[nr / 64] |= std::uint64_t{1} << (nr % 64);
	return req;
}

Result<vtice_syscalls> syscalls_ioctl(const DeviceFd &dev, const std::string &path, std::uint32_t op,
				      const TaskFilter &filter, const SyscallStrings &strings,
				      const SyscallNumbers &numbers)
{
	auto made = syscalls_request(op, filter, strings, numbers);
	if (!made)
		return made.error();
	vtice_syscalls req = *made;
	if (ioctl(dev.get(), VTICE_IOC_SYSCALLS, &req) < 0)
		return trap_error(path, "VTICE_IOC_SYSCALLS", errno);
	return req;
}

Result<std::string> read_kallsyms_text(const std::string &path)
{
	constexpr std::size_t kMaxKallsyms = 64u << 20;	// /proc/kallsyms is ~10 MB with modules
	auto bytes = read_input(path, kMaxKallsyms);
	if (!bytes)
		return bytes.error();
	return std::string(bytes->begin(), bytes->end());
}

Result<std::unique_ptr<dbg::SymbolList>> read_running_kallsyms(const std::string &path, const char *anchor)
{
	auto text = read_kallsyms_text(path);
	if (!text)
		return text.error();
	return parse_running_kallsyms(*text, path, anchor);
}

Result<std::unique_ptr<dbg::SymbolList>> parse_running_kallsyms(std::string_view text, const std::string &path,
								 const char *anchor)
{
	auto symbols = dbg::parse_kallsyms_text(text, path);
	if (!symbols)
		return make_error(path + ": " + symbols.error().to_string());
	if ((*symbols)->size() == 0 || !(*symbols)->lookup(anchor).value_or(0))
		return make_error(path + ": no kernel addresses (kptr_restrict? run as root)");
	return symbols;
}

}  // namespace vtice::console
