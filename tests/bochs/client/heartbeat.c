// SPDX-License-Identifier: GPL-2.0
/*
 * heartbeat: "VTICE-ALIVE Ns into: WHAT" every 30 s of the guest's
 * monotonic clock, until killed (or its parent dies). One process, one
 * timed sleep per line: a shell loop of `sleep 1` forked and exec'd a
 * process each second, and with every CPU stepped by a tracer each of
 * those cost seconds of guest time, so its count fell far behind the
 * clock (7 lines in 415 s of vtice doctor on Tiger Lake) and run.sh's
 * stall watch took the silence for a hang.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>

#include "report.h"

#define BEAT_SECONDS 30

int cmd_heartbeat(int argc, char **argv)
{
	struct timespec start, next;
	long beats = 0;

	(void)argc;
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		next = start;
		next.tv_sec += ++beats * BEAT_SECONDS;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL))
			;	/* EINTR: sleep on to the same instant */
		printf("VTICE-ALIVE %lds into: %s\n", beats * BEAT_SECONDS, argv[0]);
		fflush(stdout);
	}
}
