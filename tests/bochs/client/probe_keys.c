// SPDX-License-Identifier: GPL-2.0
/*
 * count() by key in VMX root (issue 24: "count calls to vfs_read by
 * process"): with
 *   vtice probe 'fn:ksys_read { @reads[comm] = count(); }'
 * armed (no predicate: every task's reads count), two children named
 * vtkeya and vtkeyb make KEYS_READS_A and KEYS_READS_B one-byte reads of
 * /dev/zero, while the kernel's own syscall tracepoint sys_enter_read,
 * filtered to those two comms, traces the same reads. Each read(2) calls
 * ksys_read once.
 *
 * vtice's map must hold, under each of the two comms, exactly the lines the
 * kernel's trace holds for that comm; the armed line must say root counts
 * them by key (so the counts came from root's slots, not from records).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"
#include "spawn.h"

#define TRACEFS		"/sys/kernel/tracing"
#define KEYS_ERR	"/tmp/vtkeys.err"
#define KEYS_JSON	"/tmp/vtkeys.json"
#define KEYS_READS_A	30
#define KEYS_READS_B	50

/* A child named comm: reads one-byte reads of /dev/zero, then exits. */
static pid_t keys_reader(const char *comm, int reads)
{
	pid_t child = fork();
	char buf[1];
	int zero, i;

	if (child)
		return child;
	prctl(PR_SET_NAME, comm);
	zero = open("/dev/zero", O_RDONLY);
	for (i = 0; i < reads; i++)
		syscall(SYS_read, zero, buf, 1);
	_exit(0);
}

/* The kernel trace's sys_read lines of each comm (the task field "vtkeya-PID"). */
static void keys_kernel_counts(long *a, long *b)
{
	char line[512];
	FILE *f = fopen(TRACEFS "/trace", "r");

	*a = *b = 0;
	while (f && fgets(line, sizeof(line), f)) {
		const char *task = line + strspn(line, " ");

		if (line[0] == '#' || !strstr(line, "sys_read("))
			continue;
		*a += !strncmp(task, "vtkeya-", 7);
		*b += !strncmp(task, "vtkeyb-", 7);
	}
	if (f)
		fclose(f);
}

/* vtice's count under comm in @reads, from its JSON ({"key":["vtkeya"],"value":30}); -1 without. */
static long keys_vtice_count(const char *comm)
{
	char line[4096], key[64];
	long n = -1;
	const char *at;
	FILE *f = fopen(KEYS_JSON, "r");

	snprintf(key, sizeof(key), "{\"key\":[\"%s\"],", comm);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "\"name\":\"@reads\"") && (at = strstr(line, key)))
			n = json_number(at, "\"value\":");
	if (f)
		fclose(f);
	return n;
}

static int keys_trace_on(void)
{
	return tracefs_write("events/syscalls/sys_enter_read/filter", "comm == \"vtkeya\" || comm == \"vtkeyb\"") ||
	       tracefs_write("trace", "") || tracefs_write("events/syscalls/sys_enter_read/enable", "1") ||
	       tracefs_write("tracing_on", "1");
}

static void keys_trace_off(void)
{
	tracefs_write("tracing_on", "0");
	tracefs_write("events/syscalls/sys_enter_read/enable", "0");
	tracefs_write("events/syscalls/sys_enter_read/filter", "0");
}

int cmd_probe_keys(int argc, char **argv)
{
	const char *const args[] = { "vtice", "probe", "fn:ksys_read { @reads[comm] = count(); }", "-o",
				     KEYS_JSON, NULL };
	const char *name = argv[0];
	long ft_a, ft_b, vt_a, vt_b;
	char err[4096];
	pid_t probe, a, b;

	(void)argc;
	if (access(TRACEFS "/events/syscalls/sys_enter_read/enable", W_OK))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	probe = spawn_vtice_on(KEYS_ERR, args, 1);
	if (probe < 0 || !wait_probe_armed(probe, KEYS_ERR, 120)) {
		system("cat " KEYS_ERR);
		return report(name, FAIL, "vtice probe did not arm (its stderr is above)");
	}
	if (keys_trace_on()) {
		stop_probe(probe, KEYS_ERR);
		return report(name, FAIL, "cannot turn on the sys_enter_read tracepoint: no oracle");
	}
	a = keys_reader("vtkeya", KEYS_READS_A);
	b = keys_reader("vtkeyb", KEYS_READS_B);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	keys_trace_off();
	stop_probe(probe, KEYS_ERR);
	keys_kernel_counts(&ft_a, &ft_b);
	vt_a = keys_vtice_count("vtkeya");
	vt_b = keys_vtice_count("vtkeyb");
	read_text(KEYS_ERR, err, sizeof(err));
	printf("probe-keys: the kernel's tracepoint: vtkeya %ld, vtkeyb %ld reads; vtice's @reads: %ld, %ld\n", ft_a,
	       ft_b, vt_a, vt_b);
	if (ft_a != KEYS_READS_A || ft_b != KEYS_READS_B)
		return report(name, FAIL, "the oracle saw %ld and %ld reads, the children made %d and %d", ft_a, ft_b,
			      KEYS_READS_A, KEYS_READS_B);
	if (!strstr(err, "counts them by key"))
		return report(name, FAIL, "the armed line does not say root counts by key: the counts are not root's");
	if (vt_a != ft_a || vt_b != ft_b)
		return report(name, FAIL, "vtice's @reads[vtkeya] %ld, [vtkeyb] %ld; the kernel's tracepoint %ld, %ld",
			      vt_a, vt_b, ft_a, ft_b);
	return report(name, PASS,
		      "@reads[comm] = count() at ksys_read, counted by key in root: vtkeya %ld, vtkeyb %ld, what "
		      "the kernel's sys_enter_read tracepoint saw of each",
		      vt_a, vt_b);
}
