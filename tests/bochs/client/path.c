// SPDX-License-Identifier: GPL-2.0
/*
 * What `vtice trace syscall` costs the tasks it does not trace, and that a
 * tracer killed mid-call leaves nothing behind (scenarios hvpath, hvpathtf).
 *
 * path-cost: getpid exits per call unarmed (goal 0), while armed for a comm
 * no task has (the quiet syscall trap: 2, SYSCALL and SYSRET), and after
 * kill -9 of the tracer (0).
 *
 * path-kill: armed for comm vtopen, whose openat comes once a second; once
 * the exit rate shows a call being stepped, kill -9; then getpid must exit
 * no more (the file's close disarmed every CPU and ended the call). With
 * "interrupt-record", the trace records (--record -o PATH_RECORDING) and
 * gets SIGINT instead, a user's Ctrl-C: it must exit by itself, and the
 * scenario then replays what it wrote of the cut call.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device.h"
#include "report.h"
#include "spawn.h"

#define PATH_ERR	"/tmp/vtice-path-cost.err"
#define PATH_RECORDING	"/tmp/vtice-path-interrupted.vtrace"
/* Exits per second, all CPUs: a traced call being stepped, not the quiet
 * trap's two per syscall (a few hundred a second here). Stepping measured
 * 9,487 to 33,521 in Bochs runs. */
#define STEPPING_RATE	5000

static pid_t start_path_trace(const char *comm, int reader_cpu, bool record)
{
	const char *const args[] = { "vtice", "trace", "syscall", "openat", "--comm", comm, "--quiet",
				     "--timeout", "600", NULL };
	const char *const recording[] = { "vtice", "trace", "syscall", "openat", "--comm", comm, "--quiet",
					  "--timeout", "600", "--record", "-o", PATH_RECORDING, NULL };

	return record ? spawn_vtice_all_on(PATH_ERR, recording, reader_cpu) : spawn_vtice_on(PATH_ERR, args, reader_cpu);
}

/*
 * Sends sig and waits; a SIGINT is followed by SIGKILL after 180 s (with
 * every CPU stepped in Bochs the console crawls until its disarm). Whether
 * it ended by itself. Says it is waiting every 20 s, for the rig's stall
 * watch.
 */
static bool stop_with(pid_t pid, int sig)
{
	int status, i;

	if (pid <= 0)
		return false;	/* kill(-1) would kill every process */
	kill(pid, sig);
	for (i = 0; sig != SIGKILL && i < 1800; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return true;
		if (i && i % 200 == 0) {
			printf("path-kill: waiting for vtice trace to end after the signal, %d s\n", i / 10);
			fflush(stdout);
		}
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return sig == SIGKILL;
}

static void stop(pid_t pid)
{
	stop_with(pid, SIGKILL);
}

int cmd_path_cost(int argc, char **argv)
{
	struct getpid_cost unarmed, armed, killed;
	pid_t trace;

	(void)argc;
	if (measure_getpid(&unarmed))
		return report(argv[0], FAIL, "no VM-exit counts from /dev/vtice");
	trace = start_path_trace("nobody", 1, false);
	if (trace < 0 || !wait_armed(trace, PATH_ERR, 120)) {
		stop(trace);
		system("cat " PATH_ERR);
		return report(argv[0], FAIL, "vtice trace syscall did not arm (its stderr is above)");
	}
	measure_getpid(&armed);
	stop(trace);
	measure_getpid(&killed);
	figure_named(argv[0], "unarmed_exits_per_call", "%.3f", unarmed.exits);
	figure_named(argv[0], "armed_exits_per_call", "%.3f", armed.exits);
	figure_named(argv[0], "armed_ratio", "%.2f", armed.tsc / unarmed.tsc);
	figure_named(argv[0], "killed_exits_per_call", "%.3f", killed.exits);
	if (unarmed.exits >= 0.01 || killed.exits >= 0.01 || armed.exits < 1.99 || armed.exits > 2.05)
		return report(argv[0], FAIL, "exits per getpid: %.3f unarmed, %.3f armed (2 expected), %.3f "
			      "after kill -9", unarmed.exits, armed.exits, killed.exits);
	return report(argv[0], PASS, "exits per getpid of an untraced task: %.3f unarmed, %.3f while "
		      "armed, %.3f after kill -9 of the tracer", unarmed.exits, armed.exits, killed.exits);
}

/* Exits per second over the next 100 ms. */
static double exit_rate(void)
{
	int64_t before = total_exits(), after;
	uint64_t t0 = now_ns();

	usleep(100000);
	after = total_exits();
	return before < 0 || after < 0 ? 0 : (double)(after - before) * 1e9 / (double)(now_ns() - t0);
}

/* Why path-kill saw no stepping, with the last of what vtice printed. */
static int report_no_stepping(const char *name, const char *what, double highest)
{
	char err[4096], *tail;

	read_text(PATH_ERR, err, sizeof(err));
	tail = strlen(err) > 300 ? err + strlen(err) - 300 : err;
	for (char *c = tail; *c; c++)
		*c = *c == '\n' ? '|' : *c;	/* one report line */
	return report(name, FAIL, "%s (vtopen running?): at most %.0f exits/s; vtice said: %s", what,
		      highest, tail);
}

/* How path-kill stops the trace: kill -9, or a recording trace's Ctrl-C. */
struct stopping {
	int reader_cpu;
	bool interrupt_record;
	bool ended_by_itself;	/* SIGINT: it exited within 180 s */
};

/*
 * One try: arm a trace of vtopen's next call (its reader on reader_cpu)
 * and stop it once the call is being stepped. 1: stopped mid-call
 * (*rate: the exit rate then); 0: the traced call ended first, no kill;
 * -1: it did not arm, or no call was stepped in 60 s (*why says which).
 */
static int kill_mid_call(struct stopping *how, double *rate, double *highest, const char **why)
{
	pid_t trace = start_path_trace("vtopen", how->reader_cpu, how->interrupt_record);
	int i;

	*rate = 0;
	if (trace < 0 || !wait_armed(trace, PATH_ERR, 120)) {
		stop(trace);
		system("cat " PATH_ERR);
		*why = "vtice trace syscall did not arm (its stderr is above)";
		return -1;
	}
	for (i = 0; i < 600 && (*rate = exit_rate()) < STEPPING_RATE; i++) {
		*highest = *rate > *highest ? *rate : *highest;
		if (waitpid(trace, NULL, WNOHANG) == trace)
			return 0;
		if (i && i % 200 == 0) {	/* for the rig's stall watch */
			printf("path-kill: waiting for a stepped call, %d s, at most %.0f exits/s\n", i / 10, *highest);
			fflush(stdout);
		}
	}
	if (*rate < STEPPING_RATE) {
		stop(trace);
		*why = "no call was stepped in 60 s";
		return -1;
	}
	how->ended_by_itself = stop_with(trace, how->interrupt_record ? SIGINT : SIGKILL);
	return 1;
}

int cmd_path_kill(int argc, char **argv)
{
	struct getpid_cost after;
	double rate = 0, highest = 0;
	const char *why = "";
	int tries, killed = 0;

	/* argv[1]: the reader's CPU (default 1), away from the traced task's:
	 * a reader queued behind the traced call cannot drain its ring. A call
	 * that ends between two 100 ms looks at the exit rate was not caught
	 * mid-way: that is the poll's timing, not what is checked; try the
	 * next call, three at most. argv[2] "interrupt-record": see the top. */
	struct stopping how = { argc > 1 ? atoi(argv[1]) : 1, argc > 2 && !strcmp(argv[2], "interrupt-record"), false };

	for (tries = 1; tries <= 3 && !killed; tries++) {
		killed = kill_mid_call(&how, &rate, &highest, &why);
		if (killed < 0)
			return report_no_stepping(argv[0], why, highest);
	}
	if (!killed)
		return report_no_stepping(argv[0], "vtice trace ended first, three calls in a row", highest);
	if (measure_getpid(&after))
		return report(argv[0], FAIL, "no VM-exit counts from /dev/vtice");
	figure_named(argv[0], "exits_per_s_when_killed", "%.0f", rate);
	figure_named(argv[0], "exits_per_call_after", "%.3f", after.exits);
	figure_named(argv[0], "tries", "%d", tries - 1);
	if (how.interrupt_record && !how.ended_by_itself)
		return report(argv[0], FAIL, "SIGINT mid-call: vtice trace did not exit within 180 s (killed)");
	if (after.exits >= 0.01)
		return report(argv[0], FAIL, "after %s mid-call, still %.3f exits per getpid",
			      how.interrupt_record ? "SIGINT" : "kill -9", after.exits);
	return report(argv[0], PASS, "%s mid-call (%.0f exits/s: stepping; call %d); then %.3f exits per getpid",
		      how.interrupt_record ? "SIGINT, and it exited by itself," : "killed", rate, tries - 1,
		      after.exits);
}
