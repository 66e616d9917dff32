// SPDX-License-Identifier: GPL-2.0
/*
 * Self-modifying code on a page with a hidden breakpoint (issue 23): the
 * kernel rewrites the text vtice probes, and the new bytes must run on
 * every CPU. First
 *   vtice probe 'fn:vfs_read /comm == "vtsmc"/ { @n = count(); }'
 * hides its int3 at vfs_read's entry. Then the kernel's own kprobe event on
 * vfs_read goes on: it sits on ftrace's call site, so ftrace rewrites
 * vfs_read's entry (text_poke through its alias, on the probed page, the
 * int3 byte included). A child named vtsmc makes SMC_READS one-byte reads
 * of /dev/zero on each CPU in turn; the kprobe goes off (the entry is
 * rewritten back) and the child reads as much again on each CPU.
 *
 * The kernel's trace must hold exactly SMC_READS hits of its event on each
 * CPU (the call ftrace wrote ran everywhere, so no CPU ran the bytes of
 * before), and vtice must count every read, before and after the rewrites.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"
#include "spawn.h"

#define TRACEFS		"/sys/kernel/tracing"
#define SMC_READS	25
#define SMC_CPUS	2
#define SMC_ERR		"/tmp/vtsmc.err"
#define SMC_JSON	"/tmp/vtsmc.json"

/* Shared with the child: which CPU to read on next, and the reads done. */
struct smc_child {
	volatile int cpu;	/* -1 idle, -2 exit, else read on that CPU */
	volatile int done;	/* bumped after each batch */
	int whole;		/* reads that returned their byte */
};

/* The child waits on shared memory, not on a syscall: it reads nothing else. */
static void smc_child_loop(struct smc_child *c)
{
	int zero = open("/dev/zero", O_RDONLY), seen = 0, i;
	char buf[1];
	cpu_set_t set;

	prctl(PR_SET_NAME, "vtsmc");
	for (;;) {
		while (c->cpu == -1)
			;
		if (c->cpu == -2)
			_exit(0);
		CPU_ZERO(&set);
		CPU_SET(c->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) == 0 && sched_getcpu() == c->cpu)
			for (i = 0; i < SMC_READS; i++)
				c->whole += syscall(SYS_read, zero, buf, 1) == 1;
		c->cpu = -1;
		c->done = ++seen;
	}
}

/* One batch of reads on cpu; 0 once the child said it is done. */
static int smc_batch(struct smc_child *c, int cpu)
{
	int before = c->done, waited;

	c->cpu = cpu;
	for (waited = 0; c->done == before && waited < 60000; waited++)
		usleep(1000);
	return c->done == before ? -1 : 0;
}

/* The kernel's event hits of vtsmc in its trace, by CPU ("[000]", "[001]"). */
static void smc_kernel_hits(long hits[SMC_CPUS])
{
	char line[512];
	FILE *f = fopen(TRACEFS "/trace", "r");
	int cpu;

	memset(hits, 0, SMC_CPUS * sizeof(hits[0]));
	while (f && fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, "vtsmc-");
		const char *bracket = at ? strchr(at, '[') : NULL;

		if (line[0] == '#' || !bracket || !strstr(line, "vtsmcr:"))
			continue;
		cpu = atoi(bracket + 1);
		if (cpu >= 0 && cpu < SMC_CPUS)
			hits[cpu]++;
	}
	if (f)
		fclose(f);
}

/* ftrace rewrites vfs_read's entry: the kernel's own kprobe, for vtsmc only. */
static int smc_kprobe_on(void)
{
	return tracefs_write("kprobe_events", "p:vtsmcr vfs_read") ||
	       tracefs_write("events/kprobes/vtsmcr/filter", "comm == \"vtsmc\"") ||
	       tracefs_write("trace", "") || tracefs_write("events/kprobes/vtsmcr/enable", "1") ||
	       tracefs_write("tracing_on", "1");
}

static void smc_kprobe_off(void)
{
	tracefs_write("tracing_on", "0");
	tracefs_write("events/kprobes/vtsmcr/enable", "0");
}

/* vtice's @n from its JSON (-1 without). */
static long smc_vtice_count(void)
{
	char line[1024];
	long n = -1;
	FILE *f = fopen(SMC_JSON, "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "\"name\":\"@n\""))
			n = json_number(line, "\"value\":");
	if (f)
		fclose(f);
	return n;
}

/*
 * The batches: SMC_CPUS with the kprobe on, SMC_CPUS after it went off.
 * NULL, or what went wrong.
 */
static const char *smc_run(struct smc_child *c, long hits[SMC_CPUS])
{
	int cpu, err = 0;

	if (smc_kprobe_on())
		return "the kernel's kprobe on vfs_read could not be set up in tracefs";
	for (cpu = 0; cpu < SMC_CPUS && !err; cpu++)
		err = smc_batch(c, cpu);
	smc_kprobe_off();
	smc_kernel_hits(hits);
	tracefs_write("kprobe_events", "");	/* O_TRUNC: ftrace writes the entry back */
	for (cpu = 0; cpu < SMC_CPUS && !err; cpu++)
		err = smc_batch(c, cpu);
	return err ? "the reader did not run its batches on each CPU" : NULL;
}

int cmd_probe_smc(int argc, char **argv)
{
	const char *const args[] = { "vtice", "probe", "fn:vfs_read /comm == \"vtsmc\"/ { @n = count(); }", "-o",
				     SMC_JSON, NULL };
	const char *name = argv[0];
	long hits[SMC_CPUS] = { 0 }, counted;
	struct smc_child *c;
	const char *failed;
	pid_t child, probe;

	(void)argc;
	if (online_cpus() < SMC_CPUS)
		return report(name, SKIP, "one CPU: nothing to cross-modify");
	if (access(TRACEFS "/kprobe_events", W_OK))
		return report(name, SKIP, "no kprobe events in this kernel");
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return report(name, FAIL, "mmap");
	memset(c, 0, sizeof(*c));
	c->cpu = -1;
	child = fork();
	if (child == 0)
		smc_child_loop(c);
	probe = spawn_vtice_on(SMC_ERR, args, 1);
	if (probe < 0 || !wait_probe_armed(probe, SMC_ERR, 120)) {
		c->cpu = -2;
		waitpid(child, NULL, 0);
		system("cat " SMC_ERR);
		return report(name, FAIL, "vtice probe did not arm");
	}
	failed = smc_run(c, hits);
	c->cpu = -2;
	waitpid(child, NULL, 0);
	stop_probe(probe, SMC_ERR);
	counted = smc_vtice_count();
	printf("probe-smc: kernel event hits by CPU %ld, %ld; vtice counted %ld; %d reads returned their byte\n",
	       hits[0], hits[1], counted, c->whole);
	if (failed)
		return report(name, FAIL, "%s", failed);
	if (hits[0] != SMC_READS || hits[1] != SMC_READS)
		return report(name, FAIL,
			      "the kernel's kprobe on vfs_read (ftrace's rewrite of the probed entry) hit %ld times on "
			      "CPU 0 and %ld on CPU 1, want %d each: a CPU ran the bytes of before",
			      hits[0], hits[1], SMC_READS);
	if (counted != 2L * SMC_CPUS * SMC_READS || c->whole != 2 * SMC_CPUS * SMC_READS)
		return report(name, FAIL, "vtice counted %ld reads of vtsmc, %d made, want %d", counted, c->whole,
			      2 * SMC_CPUS * SMC_READS);
	return report(name, PASS,
		      "ftrace rewrote vfs_read's entry under the hidden probe twice: the kernel's kprobe hit %d "
		      "times on each CPU while on, vtice counted all %ld reads",
		      SMC_READS, counted);
}
