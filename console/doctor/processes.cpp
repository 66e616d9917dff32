#include "processes.hpp"

#include <sched.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace vtice::console::doctor {

CpuPair reader_and_task_cpus()
{
	cpu_set_t allowed;
	CpuPair pair;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2)
		return pair;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		if (pair.reader < 0)
			pair.reader = cpu;
		pair.task = cpu;
	}
	return pair;
}

bool pin_self_to(int cpu)
{
	if (cpu < 0)
		return false;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) == 0;
}

Result<pid_t> spawn_vtice(const std::vector<std::string> &args, const std::string &out_path,
			  const std::string &err_path, int cpu)
{
	int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0 || err < 0) {
		int e = errno;
		if (out >= 0)
			close(out);
		if (err >= 0)
			close(err);
		return Error{out_path + ": " + std::strerror(e)};
	}
	std::vector<std::string> argv_text = {"vtice"};
	argv_text.insert(argv_text.end(), args.begin(), args.end());
	std::vector<char *> argv;
	for (std::string &a : argv_text)
		argv.push_back(a.data());
	argv.push_back(nullptr);
	pid_t pid = fork();
	if (pid == 0) {
		pin_self_to(cpu);	// best effort: an unpinned reader still works, only slower
		dup2(out, STDOUT_FILENO);
		dup2(err, STDERR_FILENO);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		execv("/proc/self/exe", argv.data());
		_exit(127);
	}
	int fork_errno = errno;
	close(out);
	close(err);
	if (pid < 0)
		return Error{std::string("fork: ") + std::strerror(fork_errno)};
	return pid;
}

Result<pid_t> fork_named(const std::string &comm, const std::function<void()> &work)
{
	pid_t pid = fork();
	if (pid < 0)
		return Error{std::string("fork: ") + std::strerror(errno)};
	if (pid == 0) {
		prctl(PR_SET_NAME, comm.c_str());
		work();
		_exit(0);
	}
	return pid;
}

std::optional<int> poll_child(pid_t pid)
{
	int status = 0;
	pid_t done = waitpid(pid, &status, WNOHANG);
	if (done == pid)
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (done < 0 && errno != EINTR)
		return -1;  // not our child, or already reaped
	return std::nullopt;
}

int wait_child(pid_t pid, int timeout_ms)
{
	for (int waited = 0;; waited += 20) {
		if (auto status = poll_child(pid))
			return *status;
		if (waited >= timeout_ms) {
			kill_child(pid);
			return -1;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
}

int interrupt_child(pid_t pid, int timeout_ms)
{
	kill(pid, SIGINT);
	return wait_child(pid, timeout_ms);
}

void kill_child(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
	}
}

std::string read_text(const std::string &path)
{
	std::ifstream in(path);
	std::stringstream text;
	text << in.rdbuf();
	return text.str();
}

}  // namespace vtice::console::doctor
