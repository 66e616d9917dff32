// SPDX-License-Identifier: GPL-2.0
/*
 * The last hits of a run counted in root: a child named vttail, pinned to
 * CPU 0, reads /dev/zero without a pause (1 to 64 bytes a read) from before
 * `vtice probe` arms until after it has exited, so hits keep arriving while
 * the console ends the run. Twice, once for each kind of table root keeps
 * beside its counts:
 *   fn:ksys_read /comm == "vttail"/ { @h = hist(arg2); }
 *   fn:ksys_read /comm == "vttail"/ { @k[tid] = count(); }
 * Every hit root counted (the summary's root_counted, from root's counts)
 * must be in the map: the hist's buckets, the key's count, add up to it. A
 * hit between the console's last read of the tables and the probes' removal
 * would be counted and not bucketed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"
#include "spawn.h"

#define TAIL_JSON	"/tmp/vttail.json"
#define TAIL_ERR	"/tmp/vttail.err"
#define TAIL_LINE	65536

/* The reader: endless reads as vttail on CPU 0, until it is killed. */
static pid_t spawn_tail_reader(void)
{
	pid_t child = fork();
	cpu_set_t cpu0;
	char buf[64];
	unsigned long i;
	int fd;

	if (child)
		return child;
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	sched_setaffinity(0, sizeof(cpu0), &cpu0);
	prctl(PR_SET_NAME, "vttail");
	fd = open("/dev/zero", O_RDONLY);
	for (i = 0; fd >= 0; i++)
		if (read(fd, buf, i % sizeof(buf) + 1) < 0)
			break;
	_exit(1);
}

/* What map @name holds in all (its buckets' counts, or its keys' values), and root_counted. */
static int read_tail_json(const char *name, long *in_map, long *root_counted)
{
	static char line[TAIL_LINE];
	char want[64];
	const char *key, *p;
	FILE *f = fopen(TAIL_JSON, "r");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "\"name\":\"%s\"", name);
	*in_map = 0;
	*root_counted = -1;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "\"type\":\"summary\"")) {
			printf("probe-tail: %s", line);
			*root_counted = json_number(line, "\"root_counted\":");
			continue;
		}
		if (!strstr(line, want))
			continue;
		key = strstr(line, "\"buckets\":") ? "\"count\":" : "\"value\":";
		for (p = line; (p = strstr(p, key)); p += strlen(key))
			*in_map += json_number(p, key);
	}
	fclose(f);
	return 0;
}

/* One run of program while the reader reads; why, when the map misses hits root counted. */
static int tail_run(const char *program, const char *map, long *counted, char *why, size_t why_len)
{
	const char *const args[] = { "vtice", "probe", program, "-o", TAIL_JSON, NULL };
	pid_t probe, reader = spawn_tail_reader();
	long in_map;
	int ok;

	unlink(TAIL_JSON);
	probe = reader > 0 ? spawn_vtice(TAIL_ERR, args) : -1;
	ok = probe > 0 && wait_probe_armed(probe, TAIL_ERR, 120) && !stop_probe(probe, TAIL_ERR);
	if (reader > 0) {
		kill(reader, SIGKILL);
		waitpid(reader, NULL, 0);
	}
	if (!ok || read_tail_json(map, &in_map, counted))
		return snprintf(why, why_len, "`vtice probe '%s'` failed (its stderr is above)", program), 0;
	if (*counted <= 0 || in_map != *counted)
		return snprintf(why, why_len, "%s holds %ld hits, root counted %ld", map, in_map, *counted), 0;
	return 1;
}

int cmd_probe_tail(int argc, char **argv)
{
	const char *name = argv[0];
	long hist_hits, key_hits;
	char why[512];

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	if (!tail_run("fn:ksys_read /comm == \"vttail\"/ { @h = hist(arg2); }", "@h", &hist_hits, why,
		      sizeof(why)))
		return report(name, FAIL, "hist(): %s", why);
	if (!tail_run("fn:ksys_read /comm == \"vttail\"/ { @k[tid] = count(); }", "@k", &key_hits, why,
		      sizeof(why)))
		return report(name, FAIL, "count() by key: %s", why);
	figure_named(name, "hist_hits", "%ld", hist_hits);
	figure_named(name, "key_hits", "%ld", key_hits);
	return report(name, PASS, "with reads going on as the probes went: hist() holds all %ld hits root counted, "
		      "count() by tid all %ld", hist_hits, key_hits);
}
