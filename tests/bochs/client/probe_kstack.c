// SPDX-License-Identifier: GPL-2.0
/*
 * kstack in a fn: probe against the kernel's own unwinder: a child named
 * vtkst makes KSTACK_READS one-byte reads of /dev/zero twice, once under a
 * kprobe event on vfs_read with the kernel's stacktrace trigger (the
 * kernel's ORC unwinder, for the child's pid alone) and once under
 *   vtice probe 'fn:vfs_read /comm == "vtkst"/ { @[kstack] = count(); }'
 * with --folded. The same syscall from the same call site has one stack:
 * vtice must fold every read into one line, count KSTACK_READS, and its
 * callers of vfs_read must be the kernel's, in order, named alike. Then the
 * same at vfs_read's returns, where vfs_read is still the leaf and its
 * callers are the ones it was entered from:
 *   vtice probe 'fn:vfs_read:return /comm == "vtkst"/ { @[kstack] = count(); }'
 * Last, the stack is copied only where a probe reads it: with kstack read
 * at vfs_write alone (which the reader never calls), the 20 vfs_read hits
 * must come with no stack: at most the six records records.h gives a
 * fn: hit without one (PROBE_HIT, ARGS12, ARGS34, ARG5, TASK, COMM).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"
#include "spawn.h"

#define TRACEFS		"/sys/kernel/tracing"
#define KSTACK_READS	20
#define KSTACK_FOLDED	"/tmp/vtkst.folded"
#define KSTACK_ERR	"/tmp/vtkst.err"
#define KSTACK_JSON	"/tmp/vtkst.json"
#define HIT_RECORDS_MAX	6	/* a fn: hit's group without reads or a stack (records.h) */
#define MAX_FRAMES	64
#define FRAME_LEN	128

struct frames {
	char name[MAX_FRAMES][FRAME_LEN];	/* leaf first */
	int n;
};

/* Shared with the reader: the start signal, and where and how its reads went. */
struct reader {
	volatile int go;
	int cpu_first, cpu_last;	/* the CPU of its first and last read */
	int whole;			/* reads that returned their byte */
};

/*
 * The child: KSTACK_READS reads as vtkst once go is set, and no other
 * read: it waits on shared memory, not on a pipe.
 */
static pid_t spawn_reader(struct reader **out)
{
	struct reader *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t child;
	char buf[1];
	int i, zero;

	if (r == MAP_FAILED)
		return -1;
	memset(r, 0, sizeof(*r));
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "vtkst");
		zero = open("/dev/zero", O_RDONLY);
		while (!r->go)
			;
		r->cpu_first = sched_getcpu();
		for (i = 0; i < KSTACK_READS; i++)
			r->whole += syscall(SYS_read, zero, buf, 1) == 1;
		r->cpu_last = sched_getcpu();
		_exit(0);
	}
	*out = r;
	return child;
}

/* Where the reads ran, for a failure's record (an intermittent 0 hits at the RETs, 2026-12-04). */
static void run_reader(pid_t child, struct reader *r, const char *point)
{
	r->go = 1;
	waitpid(child, NULL, 0);
	printf("probe-kstack %s: the reader ran on CPU %d, then %d; %d of %d reads returned their byte\n", point,
	       r->cpu_first, r->cpu_last, r->whole, KSTACK_READS);
	munmap(r, sizeof(*r));
}

/* " => ksys_read+0x6b/0xf0" -> "ksys_read" */
static int frame_name(const char *line, char *out)
{
	const char *p = strstr(line, "=> ");
	size_t len;

	if (!p)
		return 0;
	p += 3;
	len = strcspn(p, "+ \n");
	if (!len || len >= FRAME_LEN)
		return 0;
	memcpy(out, p, len);
	out[len] = '\0';
	return 1;
}

/* The first stack the trigger printed, and how many hits the event had. */
static int read_kernel_stack(struct frames *k, int *hits)
{
	char line[512];
	int in_stack = 0, done = 0;
	FILE *f = fopen(TRACEFS "/trace", "r");

	if (!f)
		return -1;
	*hits = 0;
	k->n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (strstr(line, " vtkst: ("))
			(*hits)++;
		if (strstr(line, "<stack trace>")) {
			in_stack = !done;
			continue;
		}
		if (in_stack && k->n < MAX_FRAMES && frame_name(line, k->name[k->n]))
			k->n++;
		else if (in_stack)
			in_stack = 0, done = 1;
	}
	fclose(f);
	return 0;
}

/* The kernel's stacks of the child's reads: a kprobe event and its stacktrace trigger. */
static int kernel_oracle(struct frames *k, int *hits)
{
	char pid[16];
	struct reader *reader;
	int ok;
	pid_t child = spawn_reader(&reader);

	if (child < 0)
		return -1;
	snprintf(pid, sizeof(pid), "%d", child);
	ok = !tracefs_write("kprobe_events", "p:vtkst vfs_read") &&
	     !tracefs_write("events/kprobes/vtkst/trigger", "stacktrace") &&
	     !tracefs_write("set_event_pid", pid) && !tracefs_write("trace", "") &&
	     !tracefs_write("events/kprobes/vtkst/enable", "1") && !tracefs_write("tracing_on", "1");
	run_reader(child, reader, "the kernel's kprobe");
	tracefs_write("tracing_on", "0");
	tracefs_write("events/kprobes/vtkst/enable", "0");
	ok = ok && !read_kernel_stack(k, hits);
	tracefs_write("events/kprobes/vtkst/trigger", "!stacktrace");
	tracefs_write("set_event_pid", "");
	tracefs_write("kprobe_events", "");	/* O_TRUNC: the event is gone */
	return ok ? 0 : -1;
}

/* "a;b;vfs_read 20": frames leaf first into v, the count into *count; lines read. */
static int read_folded(struct frames *v, long *count)
{
	char line[8192], *frame, *space, *save;
	int lines = 0;
	FILE *f = fopen(KSTACK_FOLDED, "r");
	struct frames root_first = { .n = 0 };
	int i;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		printf("VTICE-FOLDED %s", line);
		if (lines++)
			continue;
		space = strrchr(line, ' ');
		if (!space)
			continue;
		*space = '\0';
		*count = strtol(space + 1, NULL, 10);
		for (frame = strtok_r(line, ";", &save); frame && root_first.n < MAX_FRAMES;
		     frame = strtok_r(NULL, ";", &save))
			snprintf(root_first.name[root_first.n++], FRAME_LEN, "%s", frame);
	}
	fclose(f);
	v->n = root_first.n;
	for (i = 0; i < v->n; i++)
		memcpy(v->name[i], root_first.name[v->n - 1 - i], FRAME_LEN);
	return lines;
}

/* point: "fn:vfs_read" or "fn:vfs_read:return". */
static int vtice_stacks(const char *point, struct frames *v, long *count, int *lines)
{
	char program[256];
	const char *const args[] = { "vtice", "probe", program, "--folded", KSTACK_FOLDED, NULL };
	struct reader *reader = NULL;
	pid_t probe, child;

	snprintf(program, sizeof(program), "%s /comm == \"vtkst\"/ { @[kstack] = count(); "
		 "printf(\"vtkst hit on CPU %%d:\\n%%s\\n\", cpu, kstack); }", point);
	unlink(KSTACK_FOLDED);
	probe = spawn_vtice(KSTACK_ERR, args);
	if (probe <= 0 || !wait_probe_armed(probe, KSTACK_ERR, 120))
		return -1;
	child = spawn_reader(&reader);
	if (child > 0)
		run_reader(child, reader, point);
	if (stop_probe(probe, KSTACK_ERR) || child <= 0)
		return -1;
	*lines = read_folded(v, count);
	return *lines < 0 ? -1 : 0;
}

static void join(const struct frames *f, int from, char *out, size_t size)
{
	size_t used = 0;
	int i;

	out[0] = '\0';
	for (i = from; i < f->n && used < size; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%s", i > from ? " < " : "", f->name[i]);
}

/* Where vfs_read is in f (its callers follow), or -1. */
static int leaf_index(const struct frames *f)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->name[i], "vfs_read"))
			return i;
	return -1;
}

/* vtice's stack at point against the kernel's callers of vfs_read; why it differs in why. */
static int same_callers(const char *point, const struct frames *kernel, char *vt_text, size_t text_len, char *why,
			size_t why_len)
{
	struct frames vt = { .n = 0 };
	long count = 0;
	int lines = 0, k = leaf_index(kernel), v, i;

	if (vtice_stacks(point, &vt, &count, &lines)) {
		snprintf(why, why_len, "vtice probe at %s failed (its stderr is above)", point);
		return 0;
	}
	v = leaf_index(&vt);
	join(&vt, v + 1, vt_text, text_len);
	if (lines != 1 || count != KSTACK_READS) {
		snprintf(why, why_len, "%s: %d folded lines, the first counting %ld: expected one stack counted %d times",
			 point, lines, count, KSTACK_READS);
		return 0;
	}
	if (v != 0) {
		snprintf(why, why_len, "%s: vtice's leaf frame is %s, not vfs_read", point, vt.n ? vt.name[0] : "(none)");
		return 0;
	}
	for (i = 0; k + 1 + i < kernel->n || v + 1 + i < vt.n; i++)
		if (k + 1 + i >= kernel->n || v + 1 + i >= vt.n || strcmp(kernel->name[k + 1 + i], vt.name[v + 1 + i])) {
			snprintf(why, why_len, "%s: vfs_read's callers differ at frame %d: vtice %s", point, i + 1,
				 vt_text);
			return 0;
		}
	return vt.n;
}

/* The run's summary from -o JSON: records read, fn: hits recorded, records lost. */
static int read_summary(long *records, long *hits, long *lost)
{
	char line[2048];
	FILE *f = fopen(KSTACK_JSON, "r");

	if (!f)
		return -1;
	*records = *hits = *lost = -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "\"type\":\"summary\"")) {
			printf("probe-kstack: %s", line);
			*records = json_number(line, "\"records\":");
			*hits = json_number(line, "\"fn_hits\":");
			*lost = json_number(line, "\"lost\":");
		}
	fclose(f);
	return 0;
}

/* kstack read at vfs_write only: the reader's vfs_read hits copy no stack. Why not, in why. */
static int stack_only_where_read(char *why, size_t why_len)
{
	/* Two statements: recorded (`@reads[tid] = count()` alone root would count by key, recording none). */
	const char *program = "fn:vfs_read /comm == \"vtkst\"/ { @reads[tid] = count(); @bytes = sum(arg2); } "
			      "fn:vfs_write /comm == \"vtkst\"/ { @[kstack] = count(); }";
	const char *const args[] = { "vtice", "probe", program, "-o", KSTACK_JSON, NULL };
	struct reader *reader = NULL;
	long records, hits, lost;
	pid_t probe, child;

	unlink(KSTACK_JSON);
	probe = spawn_vtice(KSTACK_ERR, args);
	if (probe <= 0 || !wait_probe_armed(probe, KSTACK_ERR, 120))
		return snprintf(why, why_len, "vtice probe did not arm (its stderr is above)"), 0;
	child = spawn_reader(&reader);
	if (child > 0)
		run_reader(child, reader, "vfs_read beside a kstack probe at vfs_write");
	if (stop_probe(probe, KSTACK_ERR) || child <= 0 || read_summary(&records, &hits, &lost))
		return snprintf(why, why_len, "vtice probe failed (its stderr is above)"), 0;
	if (hits != KSTACK_READS || lost != 0 || records < 0 || records > hits * HIT_RECORDS_MAX)
		return snprintf(why, why_len, "%ld hits recorded, %ld records read, %ld lost: expected %d hits of at "
				"most %d records each, none lost", hits, records, lost, KSTACK_READS, HIT_RECORDS_MAX), 0;
	return (int)records;
}

int cmd_probe_kstack(int argc, char **argv)
{
	const char *name = argv[0];
	struct frames kernel;
	char kernel_text[2048], vt_text[2048], why[4096];
	int hits = 0, frames, records;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	if (access(TRACEFS "/kprobe_events", W_OK))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	if (kernel_oracle(&kernel, &hits) || kernel.n == 0)
		return report(name, FAIL, "the kernel's kprobe stacktrace gave no stack (%d hits): no oracle", hits);
	join(&kernel, leaf_index(&kernel) + 1, kernel_text, sizeof(kernel_text));
	frames = same_callers("fn:vfs_read", &kernel, vt_text, sizeof(vt_text), why, sizeof(why));
	if (!frames)
		return report(name, FAIL, "%s; the kernel %s", why, kernel_text);
	figure_named(name, "frames", "%d", frames);
	/*
	 * 0 hits at the RETs was how Bochs showed other CPUs running a split
	 * page's original frame after a step (2026-12-04, 2026-12-05), until
	 * steps ran in the stepping CPU's own EPT view.
	 */
	if (!same_callers("fn:vfs_read:return", &kernel, vt_text, sizeof(vt_text), why, sizeof(why)))
		return report(name, FAIL, "%s at vfs_read's returns; the kernel %s", why, kernel_text);
	records = stack_only_where_read(why, sizeof(why));
	if (!records)
		return report(name, FAIL, "kstack at vfs_write only: %s", why);
	figure_named(name, "records-without-stack", "%d", records);
	return report(name, PASS, "%d reads, one stack: vfs_read < %s, the callers the kernel's own unwinder "
		      "gave its kprobe (%d hits); the same at vfs_read's returns; with kstack read at vfs_write "
		      "only, the %d vfs_read hits took %d records, no stack", KSTACK_READS, vt_text, hits,
		      KSTACK_READS, records);
}
