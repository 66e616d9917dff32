// SPDX-License-Identifier: GPL-2.0
/*
 * `vtice probe` against the guest kernel's own syscall tracepoints, in the
 * same run: a child named vtprobe makes a fixed mix of openat, read and
 * close calls while both vtice (from the hypervisor) and ftrace (events
 * syscalls/sys_exit_openat, sys_enter_read, sys_exit_close, for the
 * child's pid alone) watch it. The program's printf of each openat's
 * retval must list exactly ftrace's sys_openat return values, in order;
 * its count() and sum(args->count) of reads (the argument named as the
 * kernel declares read's) and count() of closes must equal the tracepoint
 * counts and the sum of their count: fields.
 *
 * NAME-fn: a fn:vfs_read probe (a hidden breakpoint) in the same program
 * sums the same reads' sizes in root (its body is a sum() alone, so root
 * adds arg2 up and records no hit): its map is the bytes. Two more root
 * aggregations count the same reads: min(arg3) at rw_verify_area, which
 * vfs_read calls with the read's count, and max(retval) at vfs_read's
 * returns; the summary's root count is three per read.
 *
 * NAME-minmax: those two maps are the least count: field of ftrace's
 * sys_enter_read lines and the greatest return of its sys_exit_read lines.
 *
 * NAME-hist: a fourth root aggregation, hist(retval) at the returns of
 * ksys_read (each read(2) runs it once), buckets the same returns:
 * its map must hold, bucket by bucket, what ftrace's sys_exit_read
 * returns make when this file buckets them by bpftrace's rule.
 *
 * NAME-filter: the program's comm predicate reached the hypervisor's
 * filter (the line "records the syscalls of comm vtprobe"); NAME-lost: no
 * record was lost.
 *
 * NAME-chosen: root records only the syscalls the probes name: the events
 * are exactly an entry and an exit of each openat, read and close ftrace
 * saw, none of the child's prctl (whose return comes after the comm
 * changed) or exit_group, and no return is left unpaired.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <time.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device.h"
#include "report.h"
#include "spawn.h"

#define TRACEFS		"/sys/kernel/tracing"
#define PROBE_OUT	"/tmp/vtprobe.json"
#define PROBE_ERR	"/tmp/vtprobe.err"
#define MAX_OPENS	16
#define COST_OUT	"/tmp/vtcost.json"
#define COST_ERR	"/tmp/vtcost.err"
#define COST_READS	2000
#define MIG_OUT		"/tmp/vtmig.json"
#define MIG_ERR		"/tmp/vtmig.err"
#define MIG_SLEEP_MS	300

static const char kProgram[] =
	"syscall:openat:return /comm == \"vtprobe\"/ { printf(\"ret %d\\n\", retval); }\n"
	"syscall:read /comm == \"vtprobe\"/ { @reads = count(); @bytes = sum(args->count); }\n"
	"syscall:close:return /comm == \"vtprobe\"/ { @closes = count(); }\n"
	"fn:vfs_read /comm == \"vtprobe\"/ { @fnbytes = sum(arg2); }\n"
	"fn:rw_verify_area /comm == \"vtprobe\"/ { @cmin = min(arg3); }\n"
	"fn:vfs_read:return /comm == \"vtprobe\"/ { @rmax = max(retval); }\n"
	"fn:ksys_read:return /comm == \"vtprobe\"/ { @rhist = hist(retval); }\n"
	"fn:ksys_read /comm == \"vtprobe\"/ { @clin = lhist(arg2, 0, 640, 64); }\n";
/* vfs_read's and ksys_read's entries, rw_verify_area, one of vfs_read's returns, one of ksys_read's */
#define ROOT_PROBES_PER_READ	5
/* hist()'s buckets: below 0, 0, then [2^(k-1), 2^k) for k = 1..63 */
#define HIST_BUCKETS	65
/* @clin's: below 0, [0, 64) ... [576, 640), then 640 and up */
#define LHIST_MAX	640
#define LHIST_STEP	64
#define LHIST_BUCKETS	(LHIST_MAX / LHIST_STEP + 2)

static const char *const kEvents[] = { "sys_exit_openat", "sys_enter_read", "sys_exit_read", "sys_exit_close" };

struct shared {
	volatile int go;
};

/* What one tracer saw of the child. */
struct seen {
	long opens[MAX_OPENS];
	int nopens;
	long reads, bytes, closes;
	long least_count, returns, greatest_return;	/* of the reads: the least count, the greatest return */
	long return_hist[HIST_BUCKETS];	/* of the reads' returns, bucketed as hist() does */
	long count_lhist[LHIST_BUCKETS];	/* of the reads' counts, bucketed as @clin's lhist() does */
	long fn_reads, fn_bytes;	/* vtice's fn:vfs_read: root's count and sum */
	long fn_recorded;		/* its hits that crossed as records */
	long events, unpaired;		/* vtice's syscall events; returns without their entry */
};

static int set_events(const char *value)
{
	char file[96];
	size_t i;

	for (i = 0; i < sizeof(kEvents) / sizeof(kEvents[0]); i++) {
		snprintf(file, sizeof(file), "events/syscalls/%s/enable", kEvents[i]);
		if (tracefs_write(file, value))
			return -1;
	}
	return 0;
}

/* The child: waits (no syscall) for go, then the mix, then exits. */
static void vtprobe(struct shared *s)
{
	static const char *const paths[] = { "/proc/version", "/vtice-no-such-file", "/dev/zero",
					     "/proc/self/stat", "/vtice/none/either", "/dev/null" };
	static const long sizes[] = { 1, 10, 100, 1000, 4096, 7 };
	char buf[4096];
	int i, fd;

	prctl(PR_SET_NAME, "vtprobe");
	while (!s->go)
		;
	for (i = 0; i < 6; i++) {
		fd = (int)syscall(SYS_openat, AT_FDCWD, paths[i], O_RDONLY, 0);
		if (fd >= 0) {
			syscall(SYS_read, fd, buf, sizes[i]);
			syscall(SYS_read, fd, buf, sizes[5 - i]);
			syscall(SYS_close, fd);
		}
	}
	syscall(SYS_close, 1000);	/* EBADF: a close with an error return */
	_exit(0);
}

/* @clin's bucket of v, as bpftrace's docs draw lhist(v, 0, LHIST_MAX, LHIST_STEP): below, the steps, the rest. */
static int lhist_bucket_of(long v)
{
	if (v < 0)
		return 0;
	return v >= LHIST_MAX ? LHIST_BUCKETS - 1 : 1 + (int)(v / LHIST_STEP);
}

static void seen_read(struct seen *o, long count)
{
	if (!o->reads++ || count < o->least_count)
		o->least_count = count;
	o->bytes += count;
	o->count_lhist[lhist_bucket_of(count)]++;
}

/* hist()'s bucket of v, as bpftrace's docs draw them: 0 below 0, 1 for 0, then 1 + k for [2^(k-1), 2^k). */
static int hist_bucket_of(long v)
{
	int k = 0;

	if (v < 0)
		return 0;
	while (k < 63 && (v >> k) != 0)
		k++;
	return 1 + k;
}

static void seen_read_return(struct seen *o, long ret)
{
	o->return_hist[hist_bucket_of(ret)]++;
	if (!o->returns++ || ret > o->greatest_return)
		o->greatest_return = ret;
}

/*
 * "sys_openat -> 0x3", "sys_read(fd: 3, buf: ..., count: 64)",
 * "sys_read -> 0x40", "sys_close -> 0x0"
 */
static void parse_ftrace_line(const char *line, struct seen *o)
{
	const char *p;

	if ((p = strstr(line, "sys_openat -> ")) && o->nopens < MAX_OPENS)
		o->opens[o->nopens++] = (long)strtoull(p + 14, NULL, 16);
	else if ((p = strstr(line, "sys_read(")) && (p = strstr(p, "count: ")))
		seen_read(o, (long)strtoull(p + 7, NULL, 16));
	else if ((p = strstr(line, "sys_read -> ")))
		seen_read_return(o, (long)strtoull(p + 12, NULL, 16));
	else if (strstr(line, "sys_close -> "))
		o->closes++;
}

static int read_ftrace(struct seen *o)
{
	char line[512];
	FILE *f = fopen(TRACEFS "/trace", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		printf("VTICE-FTRACE probe %s", line);
		parse_ftrace_line(line, o);
	}
	fclose(f);
	return 0;
}

/*
 * The lower bound a hist() bucket's label names: "[0]" 0, "[2, 4)" 2,
 * "[4K, 8K)" 4096; "(..., 0)" -1, the bucket of the values below 0.
 */
static long bucket_label_low(const char *label)
{
	static const char units[] = "KMGTPE";
	char *end;
	long v;
	const char *unit;

	if (*label == '(')
		return -1;
	v = strtol(label + 1, &end, 10);
	unit = *end ? strchr(units, *end) : NULL;
	if (unit)
		v <<= 10 * (unit - units + 1);
	return v;
}

/* A hist map's JSON buckets: ..."buckets":[{"bucket":"[4K, 8K)","count":3},...] into hist[]. */
static void read_hist_json(const char *line, long *hist)
{
	const char *p = line;

	while ((p = strstr(p, "{\"bucket\":\""))) {
		p += strlen("{\"bucket\":\"");
		hist[hist_bucket_of(bucket_label_low(p))] += json_number(p, "\"count\":");
	}
}

/* An lhist map's JSON buckets, "(..., 0)", "[0, 64)" ... "[640, ...)", into lhist[] by their lower bounds. */
static void read_lhist_json(const char *line, long *lhist)
{
	const char *p = line;

	while ((p = strstr(p, "{\"bucket\":\""))) {
		p += strlen("{\"bucket\":\"");
		lhist[*p == '(' ? 0 : lhist_bucket_of(strtol(p + 1, NULL, 10))] += json_number(p, "\"count\":");
	}
}

/* {"type":"printf","text":"ret 3\u000a"} and {"type":"map","name":"@reads",...,"value":N}. */
static int read_probe_output(struct seen *v, long *lost)
{
	char line[1024];
	FILE *f = fopen(PROBE_OUT, "r");

	if (!f)
		return -1;
	*lost = -1;
	while (fgets(line, sizeof(line), f)) {
		printf("probe: %s", line);
		if (strstr(line, "\"text\":\"ret ") && v->nopens < MAX_OPENS)
			v->opens[v->nopens++] = json_number(line, "\"text\":\"ret ");
		else if (strstr(line, "\"name\":\"@reads\""))
			v->reads = json_number(line, "\"value\":");
		else if (strstr(line, "\"name\":\"@bytes\""))
			v->bytes = json_number(line, "\"value\":");
		else if (strstr(line, "\"name\":\"@closes\""))
			v->closes = json_number(line, "\"value\":");
		else if (strstr(line, "\"name\":\"@fnbytes\""))
			v->fn_bytes = json_number(line, "\"value\":");
		else if (strstr(line, "\"name\":\"@cmin\""))
			v->least_count = json_number(line, "\"value\":");
		else if (strstr(line, "\"name\":\"@rmax\""))
			v->greatest_return = json_number(line, "\"value\":");
		else if (strstr(line, "\"name\":\"@rhist\""))
			read_hist_json(line, v->return_hist);
		else if (strstr(line, "\"name\":\"@clin\""))
			read_lhist_json(line, v->count_lhist);
		else if (strstr(line, "\"type\":\"summary\"")) {
			*lost = json_number(line, "\"lost\":");
			v->fn_reads = json_number(line, "\"root_counted\":");
			v->fn_recorded = json_number(line, "\"fn_hits\":");
			v->events = json_number(line, "\"events\":");
			v->unpaired = json_number(line, "\"returns_unpaired\":");
		}
	}
	fclose(f);
	return 0;
}

static int compare(const char *name, const struct seen *ft, const struct seen *vt)
{
	int i;

	if (ft->nopens < 4 || ft->reads < 4 || ft->closes < 4)
		return report(name, FAIL, "the oracle saw too little (%d openat, %ld read, %ld close): ftrace off?",
			      ft->nopens, ft->reads, ft->closes);
	if (vt->nopens != ft->nopens)
		return report(name, FAIL, "%d openat returns printed, ftrace saw %d", vt->nopens, ft->nopens);
	for (i = 0; i < ft->nopens; i++)
		if (vt->opens[i] != ft->opens[i])
			return report(name, FAIL, "openat %d: vtice printed %ld, ftrace %ld", i, vt->opens[i],
				      ft->opens[i]);
	if (vt->reads != ft->reads || vt->bytes != ft->bytes || vt->closes != ft->closes)
		return report(name, FAIL, "vtice @reads %ld @bytes %ld @closes %ld; ftrace %ld reads of %ld bytes, "
			      "%ld closes", vt->reads, vt->bytes, vt->closes, ft->reads, ft->bytes, ft->closes);
	return report(name, PASS, "%d openat return values in order, %ld reads of %ld bytes, %ld closes: "
		      "exactly what the kernel's syscall tracepoints saw", ft->nopens, ft->reads, ft->bytes,
		      ft->closes);
}

static void check_side_results(const char *name, long lost)
{
	char test[128], text[2048];

	read_text(PROBE_ERR, text, sizeof(text));
	printf("%s", text);
	snprintf(test, sizeof(test), "%s-filter", name);
	if (strstr(text, "of comm vtprobe"))
		report(test, PASS, "the predicate's comm == \"vtprobe\" became the hypervisor's filter");
	else
		report(test, FAIL, "no 'records ... of comm vtprobe' on stderr");
	snprintf(test, sizeof(test), "%s-lost", name);
	if (lost == 0)
		report(test, PASS, "the summary says 0 records lost");
	else
		report(test, FAIL, "the summary says %ld records lost (-1: no summary)", lost);
}

/*
 * Every read(2) of a file calls vfs_read() once with the same count
 * (ksys_read), so the hidden breakpoint at vfs_read's entry must count
 * ftrace's sys_enter_read lines and sum their count: fields, without a
 * byte of vfs_read changed; root does both, so no hit is recorded. Root
 * counts each read at more probes (ROOT_PROBES_PER_READ).
 */
static void compare_function(const char *name, const struct seen *ft, const struct seen *vt)
{
	char test[128];

	snprintf(test, sizeof(test), "%s-fn", name);
	if (ft->reads && vt->fn_reads == ROOT_PROBES_PER_READ * ft->reads && vt->fn_bytes == ft->bytes &&
	    vt->fn_recorded == 0)
		report(test, PASS, "fn:vfs_read's arg2 summed to %ld in root, %ld hits counted there by its %d "
		       "root probes, 0 recorded: ftrace's %ld reads of %ld bytes", vt->fn_bytes, vt->fn_reads,
		       ROOT_PROBES_PER_READ, ft->reads, ft->bytes);
	else
		report(test, FAIL, "fn:vfs_read root summed %ld, its %d root probes counted %ld, %ld hits recorded; "
		       "ftrace %ld reads of %ld bytes", vt->fn_bytes, ROOT_PROBES_PER_READ, vt->fn_reads,
		       vt->fn_recorded, ft->reads, ft->bytes);
}

/* min() and max() kept in root, against ftrace's read counts and returns. */
static void compare_kept(const char *name, const struct seen *ft, const struct seen *vt)
{
	char test[128];

	snprintf(test, sizeof(test), "%s-minmax", name);
	if (ft->reads && ft->returns == ft->reads && vt->least_count == ft->least_count &&
	    vt->greatest_return == ft->greatest_return)
		report(test, PASS, "root's min(arg3) at rw_verify_area %ld and max(retval) at vfs_read's returns %ld: "
		       "the least count and the greatest return of ftrace's %ld reads", vt->least_count,
		       vt->greatest_return, ft->reads);
	else
		report(test, FAIL, "root's @cmin %ld, @rmax %ld; ftrace's %ld reads: least count %ld, %ld returns, "
		       "the greatest %ld", vt->least_count, vt->greatest_return, ft->reads, ft->least_count,
		       ft->returns, ft->greatest_return);
}

/* Root's buckets against the oracle's: how many root holds, the first that differs (-1: none), the oracle's " b:count". */
struct buckets_compared {
	long in_root;
	int differ;
	char shown[512];
};

static void compare_buckets(const long *root, const long *oracle, int n, struct buckets_compared *c)
{
	size_t at;
	int b;

	c->in_root = 0;
	c->differ = -1;
	c->shown[0] = 0;
	for (b = 0; b < n; b++) {
		c->in_root += root[b];
		if (root[b] != oracle[b] && c->differ < 0)
			c->differ = b;
		at = strlen(c->shown);
		if (oracle[b] && at + 32 < sizeof(c->shown))
			snprintf(c->shown + at, sizeof(c->shown) - at, " %d:%ld", b, oracle[b]);
	}
}

/* hist() counted in root, bucket by bucket against ftrace's read returns. */
static void compare_hist(const char *name, const struct seen *ft, const struct seen *vt)
{
	struct buckets_compared c;
	char test[128];

	compare_buckets(vt->return_hist, ft->return_hist, HIST_BUCKETS, &c);
	snprintf(test, sizeof(test), "%s-hist", name);
	if (ft->returns && c.differ < 0)
		report(test, PASS, "root's hist(retval) at ksys_read's returns holds ftrace's %ld read returns "
		       "bucket by bucket (bucket:count%s)", ft->returns, c.shown);
	else
		report(test, FAIL, "root's @rhist holds %ld returns, ftrace saw %ld; first bucket that differs: %d "
		       "(root %ld, ftrace %ld); ftrace's bucket:count%s", c.in_root, ft->returns, c.differ,
		       c.differ < 0 ? 0 : vt->return_hist[c.differ], c.differ < 0 ? 0 : ft->return_hist[c.differ],
		       c.shown);
}

/* lhist() counted in root, bucket by bucket against ftrace's read counts. */
static void compare_lhist(const char *name, const struct seen *ft, const struct seen *vt)
{
	struct buckets_compared c;
	char test[128];

	compare_buckets(vt->count_lhist, ft->count_lhist, LHIST_BUCKETS, &c);
	snprintf(test, sizeof(test), "%s-lhist", name);
	if (ft->reads && c.differ < 0)
		report(test, PASS, "root's lhist(arg2, 0, %d, %d) at ksys_read holds ftrace's %ld read counts "
		       "bucket by bucket (bucket:count%s; %d is %d and up)", LHIST_MAX, LHIST_STEP, ft->reads, c.shown,
		       LHIST_BUCKETS - 1, LHIST_MAX);
	else
		report(test, FAIL, "root's @clin holds %ld reads, ftrace saw %ld; first bucket that differs: %d "
		       "(root %ld, ftrace %ld); ftrace's bucket:count%s", c.in_root, ft->reads, c.differ,
		       c.differ < 0 ? 0 : vt->count_lhist[c.differ], c.differ < 0 ? 0 : ft->count_lhist[c.differ],
		       c.shown);
}

/* The syscalls root recorded: the named ones' two edges, no other. */
static void compare_chosen(const char *name, const struct seen *ft, const struct seen *vt)
{
	long want = 2 * (ft->nopens + ft->reads + ft->closes);
	char test[128];

	snprintf(test, sizeof(test), "%s-chosen", name);
	if (ft->nopens && vt->events == want && vt->unpaired == 0)
		report(test, PASS, "%ld syscall events, the entry and exit of ftrace's %d openat, %ld read and %ld close "
		       "alone; 0 returns unpaired", vt->events, ft->nopens, ft->reads, ft->closes);
	else
		report(test, FAIL, "%ld syscall events, %ld returns unpaired; ftrace's %d openat, %ld read and %ld "
		       "close make %ld", vt->events, vt->unpaired, ft->nopens, ft->reads, ft->closes, want);
}

struct read_cost {
	double exits, tsc;	/* CPU 0's VM exits and TSC cycles per read */
};

/* COST_READS one-byte reads of /dev/zero on CPU 0, by this process named vtcost. */
static int measure_reads(struct read_cost *c)
{
	struct vtice_cpu_stats before, after;
	char name[16] = "", buf[1];
	int fd = open_vtice(), zero = open("/dev/zero", O_RDONLY), i, ok;
	uint64_t t0, t1;

	prctl(PR_GET_NAME, name);
	prctl(PR_SET_NAME, "vtcost");
	pin_to_cpu(0);
	ok = fd >= 0 && zero >= 0 && !vtice_cpu_stats(fd, 0, &before);
	t0 = rdtsc();
	for (i = 0; ok && i < COST_READS; i++)
		syscall(SYS_read, zero, buf, 1);
	t1 = rdtsc();
	ok = ok && !vtice_cpu_stats(fd, 0, &after);
	prctl(PR_SET_NAME, name);
	if (fd >= 0)
		close(fd);
	if (zero >= 0)
		close(zero);
	if (!ok)
		return -1;
	c->exits = (double)(after.exits_total - before.exits_total) / COST_READS;
	c->tsc = (double)(t1 - t0) / COST_READS;
	return 0;
}

/*
 * The same loop under the kernel's own kprobe on vfs_read (a kprobe event,
 * counted in kprobe_profile; Debian's kernels have no ftrace function
 * profiler): the in-kernel peer's cost per hit. Its hits go to *hits (the
 * loop's reads and whatever else read meanwhile); -1 without kprobe events.
 */
static int measure_reads_kprobe(struct read_cost *c, long *hits)
{
	char line[256], event[64];
	long n;
	FILE *f;
	int err;

	*hits = -1;
	if (tracefs_write("kprobe_events", "p:vtcost vfs_read") ||
	    tracefs_write("events/kprobes/vtcost/enable", "1"))
		return -1;
	err = measure_reads(c);
	tracefs_write("events/kprobes/vtcost/enable", "0");
	f = fopen("/sys/kernel/tracing/kprobe_profile", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " %63s %ld", event, &n) == 2 && !strcmp(event, "vtcost"))
			*hits = n;
	if (f)
		fclose(f);
	tracefs_write("kprobe_events", "");	/* O_TRUNC: the event is gone */
	return err;
}

/*
 * The read loop under `vtice probe program` (its JSON output to COST_OUT):
 * *c its cost, *counted the value of its map @n (-1 if none), *recorded
 * the hits root recorded (the summary's fn_hits), *passed the hits root
 * passed over (its passed_over: other tasks', and those failing its
 * tests); -1 when the probe did not arm.
 */
static int measure_reads_probed(const char *program, struct read_cost *c, long *counted, long *recorded,
				long *passed)
{
	const char *const args[] = { "vtice", "probe", program, "-o", COST_OUT, NULL };
	char line[1024];
	pid_t probe;
	FILE *f;

	*counted = *recorded = *passed = -1;
	probe = spawn_vtice_on(COST_ERR, args, 1);
	if (probe < 0 || !wait_probe_armed(probe, COST_ERR, 120)) {
		system("cat " COST_ERR);
		return -1;
	}
	if (measure_reads(c))
		c->exits = c->tsc = -1;
	sleep(1);
	kill(probe, SIGINT);
	waitpid(probe, NULL, 0);
	f = fopen(COST_OUT, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "\"name\":\"@n\""))
			*counted = json_number(line, "\"value\":");
		if (strstr(line, "\"fn_hits\":")) {
			*recorded = json_number(line, "\"fn_hits\":");
			*passed = json_number(line, "\"passed_over\":");
		}
	}
	if (f)
		fclose(f);
	system("cat " COST_ERR);
	return 0;
}

/*
 * NAME-cost: what a probe hit costs. The same read loop with nothing
 * armed, with fn:vfs_read armed for its comm, and with a fetch program too
 * (the file's name read through two pointers at each hit); each probe must
 * count every read (exactly COST_READS), and the exits per read it adds are
 * the exits per hit (issue 24's goal: at most 2; a NOP under the probe is
 * skipped in root, so 1 is expected; a fetch program adds none). Then with
 * a predicate root tests (arg2 > 4096, of one-byte reads): every read still
 * exits, none is recorded. Then counted in root (`@n = count()` alone,
 * COUNT): every read counted, none recorded, each still one exit; and
 * the same by key (`@n[tid] = count()`, KEYED). Last, counted at
 * vfs_read's returns, where the probed instruction (a RET, or the jump to
 * the return thunk) is no NOP: each hit steps it on the original page in
 * the CPU's own EPT view, two exits. The
 * first two programs keep a second statement so that their hits are
 * recorded, what a hit costs in general.
 */
static void probe_cost(const char *name)
{
	struct read_cost bare, armed, fetch, kprobe, dropped, in_root, keyed, stepped;
	long counted, fetch_counted, kprobe_hits, recorded, dropped_counted, dropped_recorded, root_counted,
		root_recorded, passed, dropped_passed, keyed_counted, keyed_recorded, stepped_counted, stepped_recorded;
	char test[128];

	snprintf(test, sizeof(test), "%s-cost", name);
	if (measure_reads(&bare)) {
		report(test, FAIL, "no VM-exit counts from /dev/vtice");
		return;
	}
	if (measure_reads_kprobe(&kprobe, &kprobe_hits))
		kprobe.tsc = -1;
	if (measure_reads_probed("fn:vfs_read /comm == \"vtcost\"/ { @n = count(); @bytes = sum(arg2); }", &armed,
				 &counted, &recorded, &passed) ||
	    measure_reads_probed("fn:vfs_read /comm == \"vtcost\"/ { @n = count(); "
				 "@names[str(((struct file *)arg0)->f_path.dentry->d_name.name)] = count(); }",
				 &fetch, &fetch_counted, &recorded, &passed) ||
	    measure_reads_probed("fn:vfs_read /comm == \"vtcost\" && arg2 > 4096/ { @n = count(); }", &dropped,
				 &dropped_counted, &dropped_recorded, &dropped_passed) ||
	    measure_reads_probed("fn:vfs_read /comm == \"vtcost\"/ { @n = count(); }", &in_root, &root_counted,
				 &root_recorded, &passed) ||
	    measure_reads_probed("fn:vfs_read /comm == \"vtcost\"/ { @n[tid] = count(); }", &keyed, &keyed_counted,
				 &keyed_recorded, &passed) ||
	    measure_reads_probed("fn:vfs_read:return /comm == \"vtcost\"/ { @n = count(); }", &stepped,
				 &stepped_counted, &stepped_recorded, &passed)) {
		report(test, FAIL, "vtice probe did not arm (its stderr is above)");
		return;
	}
	figure_named(test, "exits_per_read_bare", "%.3f", bare.exits);
	figure_named(test, "exits_per_read_probed", "%.3f", armed.exits);
	figure_named(test, "exits_per_hit", "%.3f", armed.exits - bare.exits);
	figure_named(test, "exits_per_hit_with_fetch", "%.3f", fetch.exits - bare.exits);
	figure_named(test, "tsc_per_read_bare", "%.0f", bare.tsc);
	figure_named(test, "tsc_per_read_probed", "%.0f", armed.tsc);
	figure_named(test, "tsc_per_read_probed_with_fetch", "%.0f", fetch.tsc);
	figure_named(test, "tsc_per_read_kprobe", "%.0f", kprobe.tsc);
	figure_named(test, "exits_per_hit_tested_in_root", "%.3f", dropped.exits - bare.exits);
	figure_named(test, "tsc_per_read_tested_in_root", "%.0f", dropped.tsc);
	figure_named(test, "hits_recorded_tested_in_root", "%ld", dropped_recorded);
	figure_named(test, "hits_passed_over_tested_in_root", "%ld", dropped_passed);
	figure_named(test, "kprobe_hits", "%ld", kprobe_hits);
	figure_named(test, "exits_per_hit_counted_in_root", "%.3f", in_root.exits - bare.exits);
	figure_named(test, "tsc_per_read_counted_in_root", "%.0f", in_root.tsc);
	figure_named(test, "hits_recorded_counted_in_root", "%ld", root_recorded);
	figure_named(test, "exits_per_hit_keyed_in_root", "%.3f", keyed.exits - bare.exits);
	figure_named(test, "tsc_per_read_keyed_in_root", "%.0f", keyed.tsc);
	figure_named(test, "exits_per_hit_stepped", "%.3f", stepped.exits - bare.exits);
	figure_named(test, "tsc_per_read_stepped", "%.0f", stepped.tsc);
	if (kprobe.tsc > bare.tsc && kprobe_hits >= COST_READS)
		figure_named(test, "added_tsc_ratio_to_kprobe", "%.2f", (armed.tsc - bare.tsc) / (kprobe.tsc - bare.tsc));
	if (counted != COST_READS || fetch_counted != COST_READS)
		report(test, FAIL, "the probes counted %ld and %ld (with a fetch program) of %d reads", counted,
		       fetch_counted, COST_READS);
	else if (armed.exits - bare.exits > 2.05 || fetch.exits - bare.exits > 2.05)
		report(test, FAIL, "%.3f and %.3f (with a fetch program) VM exits per probe hit (goal: at most 2)",
		       armed.exits - bare.exits, fetch.exits - bare.exits);
	else if (root_counted != COST_READS || root_recorded != 0 || in_root.exits - bare.exits > 2.05)
		report(test, FAIL, "@n = count() counted in root: @n %ld of %d reads, %ld hits recorded (0 expected), "
		       "%.3f exits a hit", root_counted, COST_READS, root_recorded, in_root.exits - bare.exits);
	else if (keyed_counted != COST_READS || keyed_recorded != 0 || keyed.exits - bare.exits > 2.05)
		report(test, FAIL, "@n[tid] = count() counted by key in root: %ld of %d reads, %ld hits recorded (0 "
		       "expected), %.3f exits a hit", keyed_counted, COST_READS, keyed_recorded, keyed.exits - bare.exits);
	else if (stepped_counted != COST_READS || stepped_recorded != 0 || stepped.exits - bare.exits > 2.05)
		report(test, FAIL, "@n = count() at vfs_read's returns (stepped): %ld of %d reads, %ld hits recorded (0 "
		       "expected), %.3f exits a hit", stepped_counted, COST_READS, stepped_recorded,
		       stepped.exits - bare.exits);
	else if (dropped_counted > 0 || dropped_recorded != 0 || dropped.exits - bare.exits < 0.95 ||
		 dropped_passed < COST_READS)
		report(test, FAIL, "/arg2 > 4096/ over one-byte reads: @n %ld, %ld hits recorded, %ld passed over, "
		       "%.3f exits a read (none recorded, all %d passed over, each read still a hit, expected)",
		       dropped_counted, dropped_recorded, dropped_passed, dropped.exits - bare.exits, COST_READS);
	else
		report(test, PASS, "%d of %d reads counted; %.3f VM exits per hit (%.3f per read bare, %.3f probed), "
		       "%.3f with a fetch program (%.0f TSC cycles a read, %.0f without); /arg2 > 4096/ tested in "
		       "root: %.3f exits a read, 0 of %d hits recorded, %ld passed over (%.0f TSC cycles a read); "
		       "counted in root: %d of %d, none recorded, %.3f exits a hit (%.0f TSC cycles a read); by key "
		       "(@n[tid]): the same, %.3f exits a hit (%.0f TSC cycles a read); at vfs_read's returns, "
		       "stepped: %.3f exits a hit (%.0f TSC cycles a read)",
		       COST_READS, COST_READS, armed.exits - bare.exits, bare.exits, armed.exits,
		       fetch.exits - bare.exits, fetch.tsc, armed.tsc, dropped.exits - bare.exits, COST_READS,
		       dropped_passed, dropped.tsc, COST_READS, COST_READS, in_root.exits - bare.exits, in_root.tsc,
		       keyed.exits - bare.exits, keyed.tsc, stepped.exits - bare.exits, stepped.tsc);
}

/* The first bytes of vfs_read as the kernel reads its own memory. */
static int vfs_read_bytes(uint8_t *out, size_t len)
{
	uint64_t fn;

	return ksym_lookup("vfs_read", &fn) ? -1 : kcore_read(fn, out, len);
}

/* A tracefs file exists and holds no line (ftrace's and kprobes' own lists). */
static int tracefs_empty(const char *file)
{
	char path[160], text[256];

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	if (access(path, R_OK))
		return 0;
	read_text(path, text, sizeof(text));
	return text[0] == 0;
}

/*
 * NAME-stealth: while fn:vfs_read is armed, the kernel sees vfs_read's own
 * bytes through /proc/kcore (the same as before arming, no 0xCC), and
 * neither ftrace (enabled_functions) nor kprobes (kprobe_events) lists it.
 */
static void check_stealth(const char *name, const uint8_t *before, size_t len)
{
	uint8_t now[16];
	char test[128];

	snprintf(test, sizeof(test), "%s-stealth", name);
	if (vfs_read_bytes(now, len))
		report(test, FAIL, "cannot read vfs_read through /proc/kcore");
	else if (memcmp(now, before, len) || memchr(now, 0xcc, len))
		report(test, FAIL, "vfs_read's bytes changed while probed");
	else if (!tracefs_empty("enabled_functions") || !tracefs_empty("kprobe_events"))
		report(test, FAIL, "ftrace or kprobes lists something while vtice probes");
	else
		report(test, PASS, "while probed, /proc/kcore shows vfs_read's own %zu bytes; enabled_functions "
		       "and kprobe_events are empty", len);
}

/* VTICE_IOC_PROBES with req as given: 0 or -errno. */
static int probes_ioctl(int fd, struct vtice_probes *req)
{
	return ioctl(fd, VTICE_IOC_PROBES, req) ? -errno : 0;
}

/*
 * NAME-refused: arguments the module must refuse with EINVAL, the machine
 * running on: no address, too many, a user address, the middle of a
 * function (an int3 there would cut an instruction), a comm without its
 * NUL, another ABI version, a flag the module does not know.
 */
static void probe_refusals(const char *name)
{
	uint64_t fn = 0;
	struct vtice_probes base = { .size = sizeof(base), .version = VTICE_ABI_VERSION,
				     .op = VTICE_PROBES_ARM, .count = 1 }, req;
	const char *what[7] = { "no address", "65 addresses", "a user address", "vfs_read+1",
				"a comm without NUL", "ABI version 99", "an unknown flag" };
	int fd = open_vtice(), i, bad = -1, err = 0;
	char test[128];

	snprintf(test, sizeof(test), "%s-refused", name);
	if (fd < 0 || ksym_lookup("vfs_read", &fn)) {
		report(test, FAIL, "no /dev/vtice or no vfs_read in /proc/kallsyms");
		return;
	}
	for (i = 0; i < 7 && bad < 0; i++) {
		req = base;
		req.addrs[0] = fn + 1;
		if (i == 0)
			req.count = 0;
		if (i == 1)
			req.count = VTICE_PROBES_MAX + 1;
		if (i == 2)
			req.addrs[0] = 0x400000;
		if (i == 4) {
			req.addrs[0] = fn;
			memset(req.comm, 'a', sizeof(req.comm));
		}
		if (i == 5) {
			req.addrs[0] = fn;
			req.version = 99;
		}
		if (i == 6) {
			req.addrs[0] = fn;
			req.flags = VTICE_PROBES_MORE_REGS << 1;
		}
		err = probes_ioctl(fd, &req);
		if (err != -EINVAL)
			bad = i;
	}
	close(fd);
	if (bad >= 0)
		report(test, FAIL, "%s: %s instead of EINVAL", what[bad], strerror(-err));
	else
		report(test, PASS, "EINVAL for each of: no address, 65, a user address, vfs_read+1, an "
		       "unterminated comm, another ABI version, an unknown flag");
}

/* The child of probe_migration: one nanosleep on CPU 0, its own clock around it. */
static void vtmig(volatile long *own_ms, volatile int *asleep)
{
	struct timespec nap = { 0, MIG_SLEEP_MS * 1000000L }, t0, t1;

	prctl(PR_SET_NAME, "vtmig");
	pin_to_cpu(0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	*asleep = 1;
	syscall(SYS_nanosleep, &nap, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*own_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	_exit(0);
}

/*
 * NAME-latency: a start time kept per tid in a map holds across a CPU
 * migration. The child enters nanosleep on CPU 0; while it sleeps it may
 * run only on CPU 1, so it returns there. The program must print CPU 0 for
 * the entry, CPU 1 for the return, and a latency within 25% of what the
 * child's own clock measured.
 */
static void probe_migration(const char *name)
{
	const char *const args[] = { "vtice", "probe",
		"syscall:nanosleep /comm == \"vtmig\"/ { @start[tid] = nsecs; @from[tid] = cpu; }\n"
		"syscall:nanosleep:return /comm == \"vtmig\" && @start[tid]/ {\n"
		"  printf(\"mig %d %d %d\\n\", @from[tid], cpu, (nsecs - @start[tid]) / 1000000);\n"
		"  delete(@start[tid]); }", "-o", MIG_OUT, NULL };
	struct { long own_ms; int asleep; } *shared;
	long from = -1, to = -1, ms = -1;
	char test[128], line[512];
	cpu_set_t one;
	pid_t probe, child;
	FILE *f;

	snprintf(test, sizeof(test), "%s-latency", name);
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED || online_cpus() < 2) {
		report(test, FAIL, "no shared page, or fewer than 2 CPUs");
		return;
	}
	shared->own_ms = -1;
	probe = spawn_vtice_on(MIG_ERR, args, 1);
	if (probe < 0 || !wait_probe_armed(probe, MIG_ERR, 120)) {
		system("cat " MIG_ERR);
		report(test, FAIL, "vtice probe did not arm (its stderr is above)");
		return;
	}
	child = fork();
	if (child == 0)
		vtmig(&shared->own_ms, &shared->asleep);
	while (!shared->asleep)
		usleep(1000);
	usleep(50000);	/* in nanosleep by now: it makes no other syscall */
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	sched_setaffinity(child, sizeof(one), &one);
	waitpid(child, NULL, 0);
	sleep(1);
	kill(probe, SIGINT);
	waitpid(probe, NULL, 0);
	f = fopen(MIG_OUT, "r");
	while (f && fgets(line, sizeof(line), f)) {
		static const char key[] = "\"text\":\"mig ";
		const char *p = strstr(line, key);

		if (p)
			sscanf(p + strlen(key), "%ld %ld %ld", &from, &to, &ms);
	}
	if (f)
		fclose(f);
	figure_named(test, "vtice_ms", "%ld", ms);
	figure_named(test, "own_ms", "%ld", shared->own_ms);
	if (from != 0 || to != 1)
		report(test, FAIL, "entry on CPU %ld, return on CPU %ld: expected 0 then 1", from, to);
	else if (shared->own_ms <= 0 || ms * 4 < shared->own_ms * 3 || ms * 4 > shared->own_ms * 5)
		report(test, FAIL, "vtice measured %ld ms, the child's own clock %ld ms", ms, shared->own_ms);
	else
		report(test, PASS, "entered on CPU 0, returned on CPU 1; %ld ms by vtice's @start[tid], %ld ms by "
		       "the child's clock", ms, shared->own_ms);
	munmap(shared, sizeof(*shared));
}

int cmd_probe(int argc, char **argv)
{
	const char *name = argv[0];
	const char *const args[] = { "vtice", "probe", kProgram, "-o", PROBE_OUT, NULL };
	struct seen ft = { 0 }, vt = { 0 };
	uint8_t bare[16];
	struct shared *s;
	char pid[16];
	pid_t probe, child;
	int status;
	long lost;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	if (access(TRACEFS "/events/syscalls/sys_exit_openat/enable", W_OK))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	if (access(TRACEFS "/events/syscalls/sys_exit_openat/enable", W_OK))
		return report(name, FAIL, "no syscall tracepoints in tracefs (CONFIG_FTRACE_SYSCALLS): no oracle");
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return report(name, FAIL, "mmap: %s", strerror(errno));
	if (vfs_read_bytes(bare, sizeof(bare)))
		return report(name, FAIL, "cannot read vfs_read through /proc/kcore");
	probe = spawn_vtice(PROBE_ERR, args);
	if (probe < 0 || !wait_probe_armed(probe, PROBE_ERR, 120)) {
		system("cat " PROBE_ERR);
		return report(name, FAIL, "vtice probe did not arm (its stderr is above)");
	}
	child = fork();
	if (child == 0)
		vtprobe(s);
	snprintf(pid, sizeof(pid), "%d", child);
	tracefs_write("trace", "");
	if (tracefs_write("set_event_pid", pid) || set_events("1") || tracefs_write("tracing_on", "1"))
		return report(name, FAIL, "cannot enable the syscall tracepoints");
	s->go = 1;
	waitpid(child, &status, 0);
	tracefs_write("tracing_on", "0");
	set_events("0");
	tracefs_write("set_event_pid", "");
	check_stealth(name, bare, sizeof(bare));
	sleep(1);	/* the console polls every 20 ms */
	kill(probe, SIGINT);
	waitpid(probe, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		system("cat " PROBE_ERR);
		return report(name, FAIL, "vtice probe exited with status %#x (its stderr is above)", status);
	}
	if (read_ftrace(&ft) || read_probe_output(&vt, &lost))
		return report(name, FAIL, "cannot read the trace or %s", PROBE_OUT);
	check_side_results(name, lost);
	compare_function(name, &ft, &vt);
	compare_kept(name, &ft, &vt);
	compare_hist(name, &ft, &vt);
	compare_lhist(name, &ft, &vt);
	compare_chosen(name, &ft, &vt);
	probe_cost(name);
	probe_migration(name);
	probe_refusals(name);
	return compare(name, &ft, &vt);
}
