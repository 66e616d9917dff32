// SPDX-License-Identifier: GPL-2.0
/*
 * A workload that keeps every kernel entry path busy while the hypervisor
 * loads, unloads or counts: fork + exec, plain syscalls, file I/O on proc.
 * Any unexpected result counts as an error; the run fails if one occurred.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int fork_exec_true(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

static int syscalls_and_io(void)
{
	char buf[256];
	int fd;

	for (int i = 0; i < 200; i++)
		if (syscall(SYS_getppid) <= 0)
			return -EINVAL;
	fd = open("/proc/self/stat", O_RDONLY);
	if (fd < 0)
		return -errno;
	if (read(fd, buf, sizeof(buf)) <= 0) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

int cmd_stress(int argc, char **argv)
{
	const char *name = argv[0];
	long seconds = argc > 1 ? atol(argv[1]) : 10;
	uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull;
	long rounds = 0, errors = 0;
	int first_error = 0, err;

	signal(SIGTERM, on_term);
	while (!stop && (seconds == 0 || now_ns() < end)) {
		err = fork_exec_true();
		if (!err)
			err = syscalls_and_io();
		if (err && !(err == -EINTR && stop)) {
			errors++;
			if (!first_error)
				first_error = err;
		}
		rounds++;
	}
	if (errors)
		return report(name, FAIL, "rounds=%ld errors=%ld first=%s", rounds, errors,
			      strerror(-first_error));
	return report(name, PASS, "rounds=%ld errors=0", rounds);
}
