// SPDX-License-Identifier: GPL-2.0
/*
 * probe-watch: a watch: probe on kernel data against the kernel's own
 * kprobe on the function that stores it. A child (vtwatch) writes
 * /proc/sys/vm/swappiness WRITES times; each write stores vm_swappiness
 * once, in do_proc_dointvec_minmax_conv (kernel/sysctl.c: the converter
 * proc_dointvec_minmax hands each value to, `write` its 4th argument,
 * `valp` its 3rd). The kernel's oracle, one run:
 *     p:vtwatch do_proc_dointvec_minmax_conv valp=%dx:x64 write=%cx:u32
 *   the lines with write=1 and valp = &vm_swappiness are the stores.
 * vtice's, the same workload again:
 *     vtice probe 'watch:w:vm_swappiness:4 /comm == "vtwatch"/ { printf("%s %d\n", func, addr); }'
 *   one hit per store, each in the function the kernel saw store it, at
 *   the watched address; the variable ends up with what was written.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device.h"
#include "report.h"
#include "spawn.h"

#define SWAPPINESS	"/proc/sys/vm/swappiness"
#define WATCH_OUT	"/tmp/vtwatch.json"
#define WATCH_ERR	"/tmp/vtwatch.err"
#define WRITES		10
#define STORER		"do_proc_dointvec_minmax_conv"

static int read_swappiness(void)
{
	FILE *f = fopen(SWAPPINESS, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void write_swappiness(int v)
{
	char text[16];
	int fd = open(SWAPPINESS, O_WRONLY);

	if (fd < 0)
		return;
	snprintf(text, sizeof(text), "%d\n", v);
	if (write(fd, text, strlen(text)) < 0)
		perror(SWAPPINESS);
	close(fd);
}

/*
 * The child vtwatch, on CPU 0: WRITES values, base + 0 / base + 1 in turn,
 * once *go is set; the last written. *exits: CPU 0's VM exits while it ran
 * (-1 if unreadable).
 */
static int run_writer(int base, int64_t *exits)
{
	volatile int *go = mmap(NULL, sizeof(*go), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int fd = open_vtice(), i;
	int64_t before;
	pid_t child;

	*exits = -1;
	if (go == MAP_FAILED)
		return -1;
	*go = 0;
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "vtwatch");
		pin_to_cpu(0);
		while (*go != 1)
			;
		for (i = 0; i < WRITES; i++)
			write_swappiness(base + i % 2);
		_exit(0);
	}
	pin_to_cpu(1);	/* off the writer's CPU, whose exits are counted */
	before = fd >= 0 ? cpu_exits(fd, 0) : -1;
	*go = 1;
	if (child > 0)
		waitpid(child, NULL, 0);
	if (before >= 0 && cpu_exits(fd, 0) >= before)
		*exits = cpu_exits(fd, 0) - before;
	if (fd >= 0)
		close(fd);
	munmap((void *)go, sizeof(*go));
	return child > 0 ? base + (WRITES - 1) % 2 : -1;
}

/* The kernel's kprobe: stores to addr by vtwatch. -1 when the event could not be set. */
static int kernel_stores(uint64_t addr, int base)
{
	int64_t unused;
	char line[1024], *valp, *write;
	int stores = 0, ok;
	FILE *f;

	ok = !tracefs_write("kprobe_events", "p:vtwatch " STORER " valp=%dx:x64 write=%cx:u32") &&
	     !tracefs_write("trace", "") && !tracefs_write("events/kprobes/vtwatch/enable", "1") &&
	     !tracefs_write("tracing_on", "1");
	if (ok)
		run_writer(base, &unused);
	tracefs_write("tracing_on", "0");
	tracefs_write("events/kprobes/vtwatch/enable", "0");
	f = ok ? fopen("/sys/kernel/tracing/trace", "r") : NULL;
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, "vtwatch-") || !(valp = strstr(line, "valp=")) ||
		    !(write = strstr(line, "write=")))
			continue;
		stores += strtoull(valp + 5, NULL, 0) == addr && strtoul(write + 6, NULL, 0) == 1;
	}
	if (f)
		fclose(f);
	tracefs_write("kprobe_events", "");
	return f ? stores : -1;
}

/*
 * vtice's hits: how many, how many in STORER at addr; the value written
 * last; CPU 0's exits meanwhile. -1 when it failed.
 */
static int vtice_hits(uint64_t addr, int base, int *in_storer, int *last, int64_t *exits)
{
	const char *const args[] = { "vtice", "probe",
		"watch:w:vm_swappiness:4 /comm == \"vtwatch\"/ { printf(\"%s %d\\n\", func, addr); }",
		"-o", WATCH_OUT, NULL };
	char line[1024], want[128], *p;
	pid_t probe = spawn_vtice(WATCH_ERR, args);
	int hits = 0;
	FILE *f;

	if (probe <= 0 || !wait_probe_armed(probe, WATCH_ERR, 120))
		return -1;
	*last = run_writer(base, exits);
	if (stop_probe(probe, WATCH_ERR) || !(f = fopen(WATCH_OUT, "r")))
		return -1;
	snprintf(want, sizeof(want), "\"text\":\"%s %lld\\u000a\"", STORER, (long long)addr);
	*in_storer = 0;
	while (fgets(line, sizeof(line), f)) {
		printf("probe-watch: %s", line);
		if (!strstr(line, "\"type\":\"printf\""))
			continue;
		hits++;
		p = strstr(line, want);
		*in_storer += p != NULL;
	}
	fclose(f);
	return hits;
}

int cmd_probe_watch(int argc, char **argv)
{
	const char *name = argv[0];
	int original = read_swappiness(), kernel, vt, in_storer = 0, last = -1, now;
	int64_t bare_exits = -1, watched_exits = -1;
	uint64_t addr;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	if (original < 0 || original > 198 || ksym_lookup("vm_swappiness", &addr))
		return report(name, SKIP, "no %s or no vm_swappiness in /proc/kallsyms", SWAPPINESS);
	kernel = kernel_stores(addr, original < 100 ? original + 1 : original - 2);
	if (kernel != WRITES)
		return report(name, FAIL, "the kernel's kprobe on %s saw %d stores to vm_swappiness of %d writes: no oracle",
			      STORER, kernel, WRITES);
	run_writer(original < 100 ? original + 1 : original - 2, &bare_exits);
	vt = vtice_hits(addr, original < 100 ? original + 1 : original - 2, &in_storer, &last, &watched_exits);
	now = read_swappiness();
	write_swappiness(original);
	if (vt < 0)
		return report(name, FAIL, "vtice probe failed (its stderr is above)");
	if (vt != kernel || in_storer != vt)
		return report(name, FAIL, "vtice recorded %d writes (%d in %s at %llx); the kernel's kprobe saw %d stores",
			      vt, in_storer, STORER, (unsigned long long)addr, kernel);
	if (now != last)
		return report(name, FAIL, "vm_swappiness is %d after the watched writes, %d was written last", now, last);
	if (bare_exits >= 0 && watched_exits >= 0) {
		figure_named(name, "exits_per_write_bare", "%.1f", (double)bare_exits / WRITES);
		figure_named(name, "exits_per_write_watched", "%.1f", (double)watched_exits / WRITES);
	}
	return report(name, PASS, "%d writes to vm_swappiness (%llx), each in %s as the kernel's kprobe saw, "
		      "the value written kept (%d); CPU 0's VM exits per write %.1f bare, %.1f watched",
		      vt, (unsigned long long)addr, STORER, now, (double)bare_exits / WRITES,
		      (double)watched_exits / WRITES);
}
