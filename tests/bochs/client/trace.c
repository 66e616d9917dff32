// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's side of the hvtrace scenario (tests/hypervisor/bochs-scenarios.sh):
 *   ftrace-openat: the kernel's own function_graph tracer records
 *     ORACLE_CALLS openat(PATH) of this process (the host takes each
 *     do_sys_openat2 subtree): the oracle the hypervisor's trace of the
 *     same call is compared with. Several, because one call can take a
 *     slow path another does not (a slab refill: ___slab_alloc), and a
 *     traced call is compared with the closest of them;
 *   openat-loop: one openat(PATH) a second from a process named "vtopen",
 *     for the host to trace, until the hostname says DONE;
 *   move-loop: once a second, as "vtmove", a sched_setaffinity() to the
 *     CPU it does not run on: the kernel moves it there inside the call
 *     (scenario hvpathmove traces such a call);
 *   nap: one sleep as COMM (hvpathtf traces it).
 * ftrace-openat and openat-loop warm the path first, so the traced calls
 * take the same (cached) path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "report.h"

#define TRACEFS "/sys/kernel/tracing"

int tracefs_write(const char *file, const char *value)
{
	char path[128];
	int fd, ok;

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	ok = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
	close(fd);
	return ok ? 0 : -1;
}

/* Empties a tracefs file (the trace, a pid list): O_TRUNC clears it. */
static void tracefs_clear(const char *file)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
}

#define ORACLE_CALLS 3

static void open_once(const char *path)
{
	int fd = openat(AT_FDCWD, path, O_RDONLY);

	if (fd >= 0)
		close(fd);
}

/* Every line of the trace, marked for the host (which parses the calls). */
static int dump_trace(const char *name)
{
	char line[512];
	FILE *f = fopen(TRACEFS "/trace", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		printf("VTICE-FTRACE %s %s", name, line);
		n++;
	}
	fclose(f);
	fflush(stdout);
	return n;
}

int cmd_ftrace_openat(int argc, char **argv)
{
	char pid[32];
	int lines, on, i;
	bool switched;

	if (argc != 2)
		return report(argv[0], FAIL, "usage: ftrace-openat NAME PATH");
	if (access(TRACEFS "/trace", F_OK) && mount("tracefs", TRACEFS, "tracefs", 0, NULL))
		return report(argv[0], SKIP, "no tracefs at " TRACEFS);
	open_once(argv[1]);
	open_once(argv[1]);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	/*
	 * Every function of this process, not set_graph_function: on this
	 * kernel, releasing that file after a write WARNs in
	 * ftrace_match_record(). The host takes each do_sys_openat2 subtree.
	 */
	if (tracefs_write("tracing_on", "0") || tracefs_write("current_tracer", "function_graph") ||
	    tracefs_write("set_ftrace_pid", pid))
		return report(argv[0], SKIP, "the kernel's function_graph tracer cannot be set up");
	tracefs_clear("trace");
	/* Opened before tracing: the trace holds no openat but the oracle's. */
	on = open(TRACEFS "/tracing_on", O_WRONLY);
	switched = on >= 0 && write(on, "1", 1) == 1;
	for (i = 0; switched && i < ORACLE_CALLS; i++)
		open_once(argv[1]);
	if (on >= 0) {
		if (write(on, "0", 1) != 1)
			tracefs_write("tracing_on", "0");
		close(on);
	}
	lines = switched ? dump_trace(argv[0]) : 0;
	tracefs_write("current_tracer", "nop");
	tracefs_clear("set_ftrace_pid");
	if (!switched)
		return report(argv[0], SKIP, "tracing_on cannot be set");
	figure_named(argv[0], "lines", "%d", lines);
	return report(argv[0], lines > 0 ? PASS : FAIL, "function_graph of %d openat(%s): %d lines",
		      ORACLE_CALLS, argv[1], lines);
}

static bool hostname_is(const char *want)
{
	struct utsname u;

	return !uname(&u) && !strcmp(u.nodename, want);
}

int cmd_openat_loop(int argc, char **argv)
{
	unsigned calls = 0;
	int max_s, s;

	if (argc != 4 || sscanf(argv[3], "%d", &max_s) != 1)
		return report(argv[0], FAIL, "usage: openat-loop NAME PATH DONE MAX_S");
	prctl(PR_SET_NAME, "vtopen");
	/* The user pointer each call passes: getname's argument, for a replay to show */
	figure_named(argv[0], "path-at", "%p", (void *)argv[1]);
	fflush(stdout);
	open_once(argv[1]);
	for (s = 0; s < max_s && !hostname_is(argv[2]); s++) {
		open_once(argv[1]);
		calls++;
		sleep(1);
	}
	figure_named(argv[0], "calls", "%u", calls);
	return report(argv[0], hostname_is(argv[2]) ? PASS : FAIL, "%u openat calls as vtopen", calls);
}

/* One clock_nanosleep of SECONDS as COMM: a call whose task runs nowhere meanwhile. */
int cmd_nap(int argc, char **argv)
{
	int seconds;

	if (argc != 3 || sscanf(argv[2], "%d", &seconds) != 1 || seconds < 0)
		return report(argv[0], FAIL, "usage: nap NAME COMM SECONDS");
	prctl(PR_SET_NAME, argv[1]);
	sleep(seconds);
	return report(argv[0], PASS, "slept %d s as %s", seconds, argv[1]);
}

/*
 * Each call's CPU before and after, by sched_getcpu(): the oracle that the
 * calls moved, independent of the trace.
 */
int cmd_move_loop(int argc, char **argv)
{
	unsigned calls = 0, moved = 0;
	int max_s, s;

	if (argc != 3 || sscanf(argv[2], "%d", &max_s) != 1)
		return report(argv[0], FAIL, "usage: move-loop NAME DONE MAX_S");
	prctl(PR_SET_NAME, "vtmove");
	for (s = 0; s < max_s && !hostname_is(argv[1]); s++) {
		int before = sched_getcpu();
		cpu_set_t to;

		CPU_ZERO(&to);
		CPU_SET(before == 0 ? 1 : 0, &to);
		if (sched_setaffinity(0, sizeof(to), &to))
			return report(argv[0], FAIL, "sched_setaffinity: %s", strerror(errno));
		calls++;
		moved += sched_getcpu() != before;
		sleep(1);
	}
	figure_named(argv[0], "calls", "%u", calls);
	return report(argv[0], hostname_is(argv[1]) && moved == calls ? PASS : FAIL,
		      "%u of %u sched_setaffinity calls as vtmove moved it to the other CPU", moved, calls);
}

/*
 * What one warm openat(PATH) costs untraced, in TSC cycles: the fastest of
 * N (the floor is the path itself; interrupts only add), with the close
 * outside the timed span. The traced call's cycles over this are the
 * tracer's slowdown (the host divides).
 */
int cmd_openat_cost(int argc, char **argv)
{
	uint64_t best = UINT64_MAX;
	int n;

	if (argc != 3 || sscanf(argv[2], "%d", &n) != 1 || n <= 0)
		return report(argv[0], FAIL, "usage: openat-cost NAME PATH N");
	pin_to_cpu(1);
	open_once(argv[1]);
	for (int i = 0; i < n; i++) {
		uint64_t t0 = rdtsc();
		int fd = openat(AT_FDCWD, argv[1], O_RDONLY);
		uint64_t t1 = rdtsc();

		if (fd < 0)
			return report(argv[0], FAIL, "openat(%s): %s", argv[1], strerror(errno));
		close(fd);
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	figure_named(argv[0], "tsc_per_call", "%llu", (unsigned long long)best);
	return report(argv[0], PASS, "the fastest of %d openat(%s): %llu TSC cycles", n, argv[1],
		      (unsigned long long)best);
}
