#include "trace_checks.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <thread>

#include "graph_calls.hpp"
#include "processes.hpp"
#include "trace_common.hpp"

extern "C" {
#include <vtice/ioctl.h>
}

namespace vtice::console::doctor {

namespace {

constexpr int kArmTimeoutMs = 60000;
constexpr double kMinScore = 0.97;

struct Spawned {
	pid_t pid;
	std::string out, err;	// the files its stdout and stderr go to
};

Result<Spawned> spawn_trace(const DoctorOptions &o, const std::string &tag, const std::vector<std::string> &args,
			    int cpu = -1)
{
	Spawned s{0, o.work_dir + "/doctor-" + tag + ".out", o.work_dir + "/doctor-" + tag + ".err"};
	auto pid = spawn_vtice(args, s.out, s.err, cpu);
	if (!pid)
		return pid.error();
	s.pid = *pid;
	return s;
}

std::string last_line(const std::string &text)
{
	std::string t = text;
	while (!t.empty() && t.back() == '\n')
		t.pop_back();
	return t.substr(t.rfind('\n') == std::string::npos ? 0 : t.rfind('\n') + 1);
}

// Until the trace says it is armed; an error if it ends or never does.
Result<void> wait_armed(const Spawned &s)
{
	for (int waited = 0; waited < kArmTimeoutMs; waited += 50) {
		std::string err = read_text(s.err);
		if (err.find("armed on") != std::string::npos)
			return {};
		if (poll_child(s.pid))
			return Error{"the trace ended before it armed: " + last_line(err)};
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
	}
	kill_child(s.pid);
	return Error{"the trace did not arm within " + std::to_string(kArmTimeoutMs / 1000) + " s"};
}

unsigned mechanism_named_in(const std::string &err)
{
	for (unsigned m : {VTICE_TRACE_MTF, VTICE_TRACE_TF, VTICE_TRACE_BTF})
		if (err.find(std::string("(") + describe_mechanism(m)) != std::string::npos)
			return m;
	return 0;
}

std::string first_match(const std::string &text, const std::regex &re, std::size_t group = 1)
{
	std::smatch m;
	return std::regex_search(text, m, re) ? m[group].str() : "";
}

}  // namespace

Result<std::string> check_syscall_trap(const DoctorOptions &o)
{
	const std::string comm = "vtdr-sys";
	auto trace = spawn_trace(o, "syscalls", {"trace", "syscalls", "--comm", comm, "--duration", "600",
						 "--device", o.device});
	if (!trace)
		return trace.error();
	if (auto armed = wait_armed(*trace); !armed)
		return armed.error();
	auto child = fork_named(comm, [] {
		for (int i = 0; i < 5; i++)
			syscall(SYS_getppid);
	});
	if (!child) {
		kill_child(trace->pid);
		return child.error();
	}
	wait_child(*child, 10000);
	std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the trace's next poll
	int rc = interrupt_child(trace->pid, 30000);
	std::string out = read_text(trace->out);
	std::regex call(comm + "\\((\\d+)\\) getppid\\(\\) = (\\d+)");
	int calls = 0, right = 0;
	for (auto it = std::sregex_iterator(out.begin(), out.end(), call); it != std::sregex_iterator(); ++it) {
		calls++;
		right += (*it)[1] == std::to_string(*child) && (*it)[2] == std::to_string(getpid());
	}
	std::string details = std::to_string(calls) + " of the child's 5 getppid calls streamed, " +
			      std::to_string(right) + " with its pid and the kernel's answer (pid " +
			      std::to_string(getpid()) + ")";
	if (rc != 0)
		return Error{details + "; vtice trace syscalls exited " + std::to_string(rc) + ": " +
			     last_line(read_text(trace->err))};
	if (calls != 5 || right != 5)
		return Error{details + " (output: " + trace->out + ")"};
	return details;
}

Result<TraceOutcome> trace_one_openat(const DoctorOptions &o, const std::string &oracle, const std::string &path)
{
	static int run = 0;
	const std::string comm = "vtdr-open", tag = "openat-" + std::to_string(++run);
	std::string file = o.work_dir + "/doctor-" + tag + ".vtrace";
	const CpuPair cpus = reader_and_task_cpus();
	auto trace = spawn_trace(o, tag, {"trace", "syscall", "openat", "--comm", comm, "--timeout",
					  std::to_string(o.trace_timeout_s), "-o", file, "--device", o.device},
				 cpus.reader);
	if (!trace)
		return trace.error();
	if (auto armed = wait_armed(*trace); !armed)
		return armed.error();
	auto child = fork_named(comm, [&] {
		pin_self_to(cpus.task);
		// While the call is stepped, each step costs the guest's clock
		// (~200 us in Bochs, more in nested guests): CFS would preempt the
		// traced task for every kworker that time wakes (docs/tracing.md,
		// "the gate"). Best effort: a doctor that cannot still traces.
		setpriority(PRIO_PROCESS, 0, -20);
		for (int i = 0; i < o.trace_timeout_s * 10; i++) {
			int fd = open(path.c_str(), O_RDONLY);
			if (fd >= 0)
				close(fd);
			usleep(100000);
		}
	});
	if (!child) {
		kill_child(trace->pid);
		return child.error();
	}
	int rc = wait_child(trace->pid, (o.trace_timeout_s + 30) * 1000);
	kill_child(*child);
	std::string out = read_text(trace->out), err = read_text(trace->err);
	TraceOutcome t;
	t.mechanism = mechanism_named_in(err);
	if (rc != 0)
		return Error{"vtice trace syscall exited " + std::to_string(rc) + ": " + last_line(err)};
	std::string lost = first_match(out, std::regex("trace: call 1: .*; (\\d+) records lost"));
	std::string insns = first_match(out, std::regex("trace: call 1: (\\d+) instructions stepped"));
	auto oracles = ftrace_calls(oracle, "do_sys_openat2");
	GraphMatch match = closest_match(oracles, vtice_calls(out));
	char score[32];
	std::snprintf(score, sizeof(score), "%.1f %%", 100 * match.score());
	std::ostringstream d;
	d << (t.mechanism ? describe_mechanism(t.mechanism) : "an unnamed mechanism") << ": " << match.matched
	  << " of the " << match.total << " calls of the kernel's ftrace in order (" << score << ", the closest of "
	  << oracles.size() << " openat calls), "
	  << (lost.empty() ? "?" : lost) << " records lost, " << (insns.empty() ? "?" : insns)
	  << " instructions; trace " << file;
	for (std::size_t i = 0; i < match.missing.size() && i < 5; i++)
		d << (i ? ", " : "; not seen: ") << match.missing[i];
	std::string waits = first_match(out, std::regex("trace: call 1: (a traced CPU found its ring full .*)"));
	if (!waits.empty())
		d << "; " << waits;
	if (!lost.empty() && lost != "0")
		d << "; records are lost when a wait for the reader runs out, a known bug (docs/tracing.md): a "
		     "larger trace_records or ring_records avoids the waits";
	t.details = d.str();
	t.lost_records = !lost.empty() && lost != "0";
	t.size = lost + " records lost, " + insns + " instructions, trace " + file;
	t.ok = lost == "0" && match.total > 0 && match.score() >= kMinScore;
	return t;
}

}  // namespace vtice::console::doctor
