// SPDX-License-Identifier: GPL-2.0
/* Running `vtice` from the guest client, and what an armed trap costs (spawn.h). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device.h"
#include "report.h"
#include "spawn.h"

/*
 * err_path is emptied before the fork: emptied in the child, a wait_armed()
 * that ran first could read an earlier vtice's "armed on" from it (CI's
 * hvpathtf of 2026-11-28: path-kill read hvpath's, and its 60 s of
 * watching began long before the new trace armed).
 */
/* vtice with args on cpu, stderr (and stdout too, when both) to path. */
static pid_t spawn_to(const char *path, const char *const args[], int cpu, int both)
{
	int err = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	pid_t pid;

	if (err < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		if (online_cpus() > cpu)
			pin_to_cpu(cpu);
		dup2(err, 2);
		if (both)
			dup2(err, 1);
		execv(VTICE_BIN, (char *const *)args);
		_exit(127);
	}
	close(err);
	return pid;
}

pid_t spawn_vtice_on(const char *err_path, const char *const args[], int cpu)
{
	return spawn_to(err_path, args, cpu, 0);
}

pid_t spawn_vtice(const char *err_path, const char *const args[])
{
	return spawn_to(err_path, args, 1, 0);
}

pid_t spawn_vtice_all(const char *path, const char *const args[])
{
	return spawn_to(path, args, 1, 1);
}

pid_t spawn_vtice_all_on(const char *path, const char *const args[], int cpu)
{
	return spawn_to(path, args, cpu, 1);
}

void read_text(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(out, 1, len - 1, f);
		fclose(f);
	}
	out[n] = 0;
}

int wait_armed(pid_t trace, const char *err_path, int max_s)
{
	for (int i = 0; i < max_s * 10; i++) {
		char text[512];

		read_text(err_path, text, sizeof(text));
		if (strstr(text, "armed on"))
			return 1;
		if (waitpid(trace, NULL, WNOHANG) == trace) {
			fprintf(stderr, "vtice ended early: %s\n", text);
			return 0;
		}
		if (i && i % 200 == 0) {	/* for the rig's stall watch */
			printf("waiting for vtice trace to arm, %d s\n", i / 10);
			fflush(stdout);
		}
		usleep(100000);
	}
	return 0;
}

/* CPU 0's VM exits so far, or -1. */
static int64_t cpu0_exits(void)
{
	struct vtice_cpu_stats cs;
	int fd = open_vtice(), err;

	if (fd < 0)
		return -1;
	err = vtice_cpu_stats(fd, 0, &cs);
	close(fd);
	return err ? -1 : (int64_t)cs.exits_total;
}

int measure_getpid(struct getpid_cost *c)
{
	int64_t before, after;
	uint64_t t0, t1;

	pin_to_cpu(0);
	before = cpu0_exits();
	t0 = rdtsc();
	for (int i = 0; i < UNTRACED_CALLS; i++)
		syscall(SYS_getpid);
	t1 = rdtsc();
	after = cpu0_exits();
	if (before < 0 || after < 0)
		return -1;
	c->exits = (double)(after - before) / UNTRACED_CALLS;
	c->tsc = (double)(t1 - t0) / UNTRACED_CALLS;
	return 0;
}

/*
 * `vtice probe` said it armed everything, within max_s seconds; else its
 * stderr is printed (why it ended, or how far it got).
 */
int wait_probe_armed(pid_t probe, const char *err_path, int max_s)
{
	char text[2048];
	int i;

	for (i = 0; i < max_s * 10; i++) {
		read_text(err_path, text, sizeof(text));
		if (strstr(text, "vtice probe: armed"))
			return 1;
		if (waitpid(probe, NULL, WNOHANG) == probe)
			break;
		usleep(100000);
	}
	read_text(err_path, text, sizeof(text));
	printf("%s", text);
	return 0;
}

/* After the console's next polls: SIGINT, its stderr printed; 0 when it exited 0. */
int stop_probe(pid_t probe, const char *err_path)
{
	char text[4096];
	int status;

	sleep(1);	/* the console polls every 20 ms */
	kill(probe, SIGINT);
	waitpid(probe, &status, 0);
	read_text(err_path, text, sizeof(text));
	printf("%s", text);
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

long json_number(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}
