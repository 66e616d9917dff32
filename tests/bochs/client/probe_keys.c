// SPDX-License-Identifier: GPL-2.0
/*
 * count() and sum() by key in VMX root (issue 24: "count calls to
 * vfs_read by process"): with
 *   vtice probe 'fn:ksys_read { @reads[comm] = count(); }
 *                fn:vfs_read { @bytes[comm] = sum(arg2); }'
 * armed (no predicate: every task's reads count), two children named
 * vtkeya and vtkeyb make KEYS_READS_A one-byte and KEYS_READS_B
 * KEYS_SIZE_B-byte reads of /dev/zero, while the kernel's own syscall
 * tracepoint sys_enter_read, filtered to those two comms, traces the same
 * reads. Each read(2) calls ksys_read, and vfs_read, once, with its count.
 *
 * vtice's maps must hold, under each of the two comms, exactly the lines
 * the kernel's trace holds for that comm, and the sum of their count:
 * fields; the armed line must say root counts them, and keeps the sum, by
 * key (so the numbers came from root's slots, not from records).
 *
 * NAME-full: more keys than root has slots (VTICE_FETCH_KEYED_SLOTS an
 * address). A child named vtkeyc reads KEYS_SIZES sizes (1, 2, ...), each
 * twice, under
 *   vtice probe 'fn:ksys_read /comm == "vtkeyc"/ { @sizes[arg2] = count(); }'
 * Root counts the first 32 sizes in its slots; the hits of the others find
 * none and are recorded, and the console counts those. Every size's count
 * must still be what the kernel's tracepoint saw of it (its count: field),
 * and some hits must have come as records (the summary's fn_hits).
 *
 * NAME-func: keys root does not hold, but each probed address has one
 * of: a child named vtkeyd makes KEYS_READS_D reads and KEYS_WRITES_D
 * writes under
 *   vtice probe 'fn:ksys_read*, fn:ksys_writ? /comm == "vtkeyd"/ { @calls[func] = count(); }
 *                fn:vfs_read, fn:vfs_write /comm == "vtkeyd"/ { @bytes[probe] = sum(arg2); }'
 * Root counts (and sums) each address, the console files it under its
 * function or point: each must be what the kernel's sys_enter_read and
 * sys_enter_write tracepoints saw of vtkeyd (lines, count: fields), and
 * the armed line must say root counts them by function and by point. The
 * patterns (bpftrace's kprobe:ksys_read*, a shell's ?) take every function
 * the guest's kallsyms names so: ksys_readahead too, which vtkeyd never
 * calls.
 *
 * NAME-read: keys that are values, past root's slots. A child named
 * vtkeye preads 1 + k % 5 bytes of /dev/zero at KEYS_OFFSETS offsets
 * (k * KEYS_STRIDE, past 32 bits from k = 16), each twice, under
 *   vtice probe 'fn:vfs_read /comm == "vtkeye"/ { @at[args->pos[0]] = count(); }
 *                fn:__x64_sys_pread64 /comm == "vtkeye"/ {
 *                  @bytes[tid, ((struct pt_regs *)arg0)->r10] = sum(((struct pt_regs *)arg0)->dx); }'
 * (pread64's entry hands vfs_read a pointer to the offset). Root reads
 * the offset through vfs_read's argument and counts under it; at the
 * syscall's entry it reads the offset (r10) from the caller's registers,
 * sets it aside as the key's second word (KEY) beside the task's tid,
 * reads the count (dx) and adds it up under that pair. The hits of the offsets past its 32 slots come as
 * records carrying what root read, counted by the console. Every offset's
 * count and bytes must be what the kernel's sys_enter_pread64 tracepoint
 * saw of it (its pos: and count: fields), some hits recorded, and the
 * armed line must say root counts them, and sums them, by key.
 *
 * NAME-unreadable: reads that fault in root. A child named vtkeyf makes
 * KEYS_READS_F one-byte reads under
 *   vtice probe 'fn:ksys_read /comm == "vtkeyf"/ { @pos[comm] = sum(((struct file *)arg2)->f_pos); }'
 * (arg2, the count, is no pointer: the read faults). Root counts every
 * hit, so the summary's unreadable_reads, one a hit, can only come from
 * root's own count of them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vtice/ioctl.h>

#include "report.h"
#include "spawn.h"

#define TRACEFS		"/sys/kernel/tracing"
#define KEYS_ERR	"/tmp/vtkeys.err"
#define KEYS_JSON	"/tmp/vtkeys.json"
#define KEYS_READS_A	30
#define KEYS_READS_B	50
#define KEYS_SIZE_B	7
#define KEYS_SIZES	40	/* more than VTICE_FETCH_KEYED_SLOTS */
#define KEYS_READS_D	20
#define KEYS_WRITES_D	12
#define KEYS_OFFSETS	40	/* more than VTICE_FETCH_KEYED_SLOTS */
#define KEYS_STRIDE	0x10000001LL
#define KEYS_READS_F	25

/* A child named comm: makes reads reads of size bytes of /dev/zero, then exits. */
static pid_t keys_reader(const char *comm, int reads, size_t size)
{
	pid_t child = fork();
	char buf[16];
	int zero, i;

	if (child)
		return child;
	prctl(PR_SET_NAME, comm);
	zero = open("/dev/zero", O_RDONLY);
	for (i = 0; i < reads; i++)
		syscall(SYS_read, zero, buf, size < sizeof(buf) ? size : sizeof(buf));
	_exit(0);
}

/* What the kernel's trace saw of one comm: its sys_read lines, and their count: fields summed. */
struct keys_seen {
	long reads, bytes;
};

/* A child named vtkeyc: reads of 1, 2, ... KEYS_SIZES bytes of /dev/zero, the whole run twice. */
static pid_t keys_sizes_reader(void)
{
	pid_t child = fork();
	char buf[KEYS_SIZES];
	int zero, pass, size;

	if (child)
		return child;
	prctl(PR_SET_NAME, "vtkeyc");
	zero = open("/dev/zero", O_RDONLY);
	for (pass = 0; pass < 2; pass++)
		for (size = 1; size <= KEYS_SIZES; size++)
			syscall(SYS_read, zero, buf, size);
	_exit(0);
}

/* The kernel trace's lines of call ("sys_read(") by the task comm ("vtkeya" in "vtkeya-PID"), their count: fields summed. */
static struct keys_seen keys_kernel_seen(const char *comm, const char *call)
{
	struct keys_seen seen = { 0, 0 };
	char line[512], task[32];
	FILE *f = fopen(TRACEFS "/trace", "r");
	const char *count;

	snprintf(task, sizeof(task), "%s-", comm);
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, call) || strncmp(line + strspn(line, " "), task, strlen(task)))
			continue;
		seen.reads++;
		if ((count = strstr(line, "count: ")))
			seen.bytes += (long)strtoul(count + 7, NULL, 16);
	}
	if (f)
		fclose(f);
	return seen;
}

/* The kernel trace's sys_read lines by their count: field (hex), sizes 1..KEYS_SIZES. */
static void keys_kernel_sizes(long by_size[KEYS_SIZES + 1])
{
	char line[512];
	FILE *f = fopen(TRACEFS "/trace", "r");
	const char *count;
	unsigned long size;

	memset(by_size, 0, (KEYS_SIZES + 1) * sizeof(by_size[0]));
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, "sys_read(") || !(count = strstr(line, "count: ")))
			continue;
		size = strtoul(count + 7, NULL, 16);
		if (size <= KEYS_SIZES)
			by_size[size]++;
	}
	if (f)
		fclose(f);
}

/* vtice's count under key (its JSON text: "\"vtkeya\"", "12") in map, from {"key":[KEY],"value":N}; -1 without. */
static long keys_vtice_count(const char *map, const char *key)
{
	char line[4096], name[64], entry[64];
	long n = -1;
	const char *at;
	FILE *f = fopen(KEYS_JSON, "r");

	snprintf(name, sizeof(name), "\"name\":\"%s\"", map);
	snprintf(entry, sizeof(entry), "{\"key\":[%s],", key);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, name) && (at = strstr(line, entry)))
			n = json_number(at, "\"value\":");
	if (f)
		fclose(f);
	return n;
}

/* The summary's number after key ("\"fn_hits\":"), -1 without. */
static long keys_summary(const char *key)
{
	char line[4096];
	long n = -1;
	FILE *f = fopen(KEYS_JSON, "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "\"type\":\"summary\""))
			n = json_number(line, key);
	if (f)
		fclose(f);
	return n;
}

/* The kernel's sys_enter_read and sys_enter_write tracepoints on, for the tasks filter names. */
static int keys_trace_on(const char *filter)
{
	return tracefs_write("events/syscalls/sys_enter_read/filter", filter) ||
	       tracefs_write("events/syscalls/sys_enter_write/filter", filter) || tracefs_write("trace", "") ||
	       tracefs_write("events/syscalls/sys_enter_read/enable", "1") ||
	       tracefs_write("events/syscalls/sys_enter_write/enable", "1") || tracefs_write("tracing_on", "1");
}

static void keys_trace_off(void)
{
	tracefs_write("tracing_on", "0");
	tracefs_write("events/syscalls/sys_enter_read/enable", "0");
	tracefs_write("events/syscalls/sys_enter_write/enable", "0");
	tracefs_write("events/syscalls/sys_enter_read/filter", "0");
	tracefs_write("events/syscalls/sys_enter_write/filter", "0");
}

/* program armed (its output in KEYS_JSON) and the kernel's tracepoint on for filter; the probe's pid, or -1. */
static pid_t keys_start(const char *program, const char *filter)
{
	const char *const args[] = { "vtice", "probe", program, "-o", KEYS_JSON, NULL };
	pid_t probe = spawn_vtice_on(KEYS_ERR, args, 1);

	if (probe < 0 || !wait_probe_armed(probe, KEYS_ERR, 120)) {
		system("cat " KEYS_ERR);
		return -1;
	}
	if (keys_trace_on(filter)) {
		stop_probe(probe, KEYS_ERR);
		return -1;
	}
	return probe;
}

static void keys_stop(pid_t probe)
{
	keys_trace_off();
	stop_probe(probe, KEYS_ERR);
}

/*
 * @reads[comm] at ksys_read and @bytes[comm] at vfs_read for every task:
 * two comms' counts and bytes against the tracepoint's.
 */
static void keys_by_comm(const char *name)
{
	struct keys_seen ft_a, ft_b, vt_a, vt_b;
	char err[4096];
	pid_t probe, a, b;

	probe = keys_start("fn:ksys_read { @reads[comm] = count(); } fn:vfs_read { @bytes[comm] = sum(arg2); }",
			   "comm == \"vtkeya\" || comm == \"vtkeyb\"");
	if (probe < 0) {
		report(name, FAIL, "vtice probe or the kernel's tracepoint did not start (stderr above)");
		return;
	}
	a = keys_reader("vtkeya", KEYS_READS_A, 1);
	b = keys_reader("vtkeyb", KEYS_READS_B, KEYS_SIZE_B);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	keys_stop(probe);
	ft_a = keys_kernel_seen("vtkeya", "sys_read(");
	ft_b = keys_kernel_seen("vtkeyb", "sys_read(");
	vt_a = (struct keys_seen){ keys_vtice_count("@reads", "\"vtkeya\""), keys_vtice_count("@bytes", "\"vtkeya\"") };
	vt_b = (struct keys_seen){ keys_vtice_count("@reads", "\"vtkeyb\""), keys_vtice_count("@bytes", "\"vtkeyb\"") };
	read_text(KEYS_ERR, err, sizeof(err));
	printf("probe-keys: the kernel's tracepoint: vtkeya %ld reads of %ld bytes, vtkeyb %ld of %ld; vtice's @reads "
	       "%ld, %ld, @bytes %ld, %ld\n", ft_a.reads, ft_a.bytes, ft_b.reads, ft_b.bytes, vt_a.reads, vt_b.reads,
	       vt_a.bytes, vt_b.bytes);
	if (ft_a.reads != KEYS_READS_A || ft_b.reads != KEYS_READS_B)
		report(name, FAIL, "the oracle saw %ld and %ld reads, the children made %d and %d", ft_a.reads,
		       ft_b.reads, KEYS_READS_A, KEYS_READS_B);
	else if (!strstr(err, "counts them by key") || !strstr(err, "counts them and keeps their sum() value by key"))
		report(name, FAIL, "the armed line does not say root counts and sums by key: the numbers are not root's");
	else if (vt_a.reads != ft_a.reads || vt_b.reads != ft_b.reads || vt_a.bytes != ft_a.bytes ||
		 vt_b.bytes != ft_b.bytes)
		report(name, FAIL, "vtice's @reads[vtkeya] %ld, [vtkeyb] %ld, @bytes %ld, %ld; the kernel's tracepoint "
		       "%ld, %ld reads of %ld, %ld bytes", vt_a.reads, vt_b.reads, vt_a.bytes, vt_b.bytes, ft_a.reads,
		       ft_b.reads, ft_a.bytes, ft_b.bytes);
	else
		report(name, PASS,
		       "@reads[comm] = count() at ksys_read and @bytes[comm] = sum(arg2) at vfs_read, by key in root: "
		       "vtkeya %ld reads of %ld bytes, vtkeyb %ld of %ld, what the kernel's sys_enter_read tracepoint "
		       "saw of each", vt_a.reads, vt_a.bytes, vt_b.reads, vt_b.bytes);
}

/* @sizes[arg2] with more sizes than root has slots: every size's count still the tracepoint's. */
static void keys_past_slots(const char *name)
{
	long ft[KEYS_SIZES + 1], vt, in_root, recorded, total = 0;
	char test[128], key[16];
	int size, first_wrong = 0;
	pid_t probe, c;

	snprintf(test, sizeof(test), "%s-full", name);
	probe = keys_start("fn:ksys_read /comm == \"vtkeyc\"/ { @sizes[arg2] = count(); }", "comm == \"vtkeyc\"");
	if (probe < 0) {
		report(test, FAIL, "vtice probe or the kernel's tracepoint did not start (stderr above)");
		return;
	}
	c = keys_sizes_reader();
	waitpid(c, NULL, 0);
	keys_stop(probe);
	keys_kernel_sizes(ft);
	for (size = 1; size <= KEYS_SIZES; size++) {
		snprintf(key, sizeof(key), "%d", size);
		vt = keys_vtice_count("@sizes", key);
		total += ft[size];
		if (vt != ft[size] && !first_wrong) {
			first_wrong = size;
			printf("probe-keys: size %d: vtice %ld, the kernel's tracepoint %ld\n", size, vt, ft[size]);
		}
	}
	in_root = keys_summary("\"root_counted\":");
	recorded = keys_summary("\"fn_hits\":");
	printf("probe-keys: %d sizes, %ld reads by the tracepoint; %ld counted in root, %ld recorded\n", KEYS_SIZES,
	       total, in_root, recorded);
	if (total != 2 * KEYS_SIZES)
		report(test, FAIL, "the oracle saw %ld reads of vtkeyc, the child made %d", total, 2 * KEYS_SIZES);
	else if (first_wrong)
		report(test, FAIL, "@sizes[%d] is not the tracepoint's count (above)", first_wrong);
	else if (recorded < KEYS_SIZES - VTICE_FETCH_KEYED_SLOTS || in_root + recorded != total)
		report(test, FAIL, "%ld hits counted in root and %ld recorded, of %ld: at least %d should have found no "
		       "slot", in_root, recorded, total, KEYS_SIZES - VTICE_FETCH_KEYED_SLOTS);
	else
		report(test, PASS,
		       "%d sizes each read twice under @sizes[arg2] = count(): every size's count is the kernel's "
		       "tracepoint's; %ld hits counted in root's %d slots, the %ld that found none recorded and "
		       "counted by the console",
		       KEYS_SIZES, in_root, VTICE_FETCH_KEYED_SLOTS, recorded);
}

/* A child named vtkeyd: KEYS_READS_D reads of 3 bytes of /dev/zero, KEYS_WRITES_D writes of 7 to /dev/null. */
static pid_t keys_read_write(void)
{
	pid_t child = fork();
	char buf[8] = { 0 };
	int zero, null, i;

	if (child)
		return child;
	prctl(PR_SET_NAME, "vtkeyd");
	zero = open("/dev/zero", O_RDONLY);
	null = open("/dev/null", O_WRONLY);
	for (i = 0; i < KEYS_READS_D; i++)
		syscall(SYS_read, zero, buf, 3);
	for (i = 0; i < KEYS_WRITES_D; i++)
		syscall(SYS_write, null, buf, 7);
	_exit(0);
}

/* The kernel's own text symbols /proc/kallsyms names that match one of two patterns (fnmatch). */
static int keys_kallsyms_matches(const char *a, const char *b)
{
	char line[512], type, name[256], module[64];
	int n = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && fgets(line, sizeof(line), f)) {
		module[0] = 0;
		if (sscanf(line, "%*s %c %255s %63s", &type, name, module) < 2 || module[0] ||
		    (type != 't' && type != 'T'))
			continue;
		n += !fnmatch(a, name, 0) || !fnmatch(b, name, 0);
	}
	if (f)
		fclose(f);
	return n;
}

/*
 * @calls[func] = count() at ksys_read and ksys_write, @bytes[probe] =
 * sum(arg2) at vfs_read and vfs_write, of vtkeyd: root counts each
 * address and the console files it under the address's function or
 * point; both against the tracepoints' sys_read and sys_write lines.
 */
static void keys_by_function(const char *name)
{
	struct keys_seen ft_r, ft_w;
	long calls_r, calls_w, bytes_r, bytes_w;
	char test[128], err[4096], points[64];
	pid_t probe, d;

	snprintf(test, sizeof(test), "%s-func", name);
	probe = keys_start("fn:ksys_read*, fn:ksys_writ? /comm == \"vtkeyd\"/ { @calls[func] = count(); }\n"
			   "fn:vfs_read, fn:vfs_write /comm == \"vtkeyd\"/ { @bytes[probe] = sum(arg2); }",
			   "comm == \"vtkeyd\"");
	if (probe < 0) {
		report(test, FAIL, "vtice probe or the kernel's tracepoints did not start (stderr above)");
		return;
	}
	d = keys_read_write();
	waitpid(d, NULL, 0);
	keys_stop(probe);
	ft_r = keys_kernel_seen("vtkeyd", "sys_read(");
	ft_w = keys_kernel_seen("vtkeyd", "sys_write(");
	calls_r = keys_vtice_count("@calls", "\"ksys_read\"");
	calls_w = keys_vtice_count("@calls", "\"ksys_write\"");
	bytes_r = keys_vtice_count("@bytes", "\"fn:vfs_read\"");
	bytes_w = keys_vtice_count("@bytes", "\"fn:vfs_write\"");
	read_text(KEYS_ERR, err, sizeof(err));
	snprintf(points, sizeof(points), "2 probes, %d points,", keys_kallsyms_matches("ksys_read*", "ksys_writ?") + 2);
	printf("probe-keys: the kernel's tracepoints: vtkeyd %ld reads of %ld bytes, %ld writes of %ld; vtice's "
	       "@calls %ld, %ld, @bytes %ld, %ld\n", ft_r.reads, ft_r.bytes, ft_w.reads, ft_w.bytes, calls_r, calls_w,
	       bytes_r, bytes_w);
	if (ft_r.reads != KEYS_READS_D || ft_w.reads != KEYS_WRITES_D)
		report(test, FAIL, "the oracle saw %ld reads and %ld writes, the child made %d and %d", ft_r.reads,
		       ft_w.reads, KEYS_READS_D, KEYS_WRITES_D);
	else if (!strstr(err, points))
		report(test, FAIL, "the armed line does not say '%s': the patterns did not become the guest's "
		       "kallsyms's ksys_read* and ksys_writ? functions", points);
	else if (!strstr(err, "by function (each probed address's)") ||
		 !strstr(err, "by probe point (each probed address's)"))
		report(test, FAIL, "the armed line does not say root counts by function and by point: the numbers "
		       "are not root's");
	else if (calls_r != ft_r.reads || calls_w != ft_w.reads || bytes_r != ft_r.bytes || bytes_w != ft_w.bytes)
		report(test, FAIL, "vtice's @calls[ksys_read] %ld, [ksys_write] %ld, @bytes[fn:vfs_read] %ld, "
		       "[fn:vfs_write] %ld; the kernel's tracepoints %ld, %ld calls of %ld, %ld bytes", calls_r,
		       calls_w, bytes_r, bytes_w, ft_r.reads, ft_w.reads, ft_r.bytes, ft_w.bytes);
	else
		report(test, PASS,
		       "@calls[func] = count() at fn:ksys_read*, fn:ksys_writ? and @bytes[probe] = sum(arg2), counted "
		       "in root by address (%s as the guest's kallsyms has): ksys_read %ld, ksys_write %ld, "
		       "fn:vfs_read %ld bytes, fn:vfs_write %ld, what the kernel's sys_enter_read and sys_enter_write "
		       "tracepoints saw of vtkeyd", points, calls_r, calls_w, bytes_r, bytes_w);
}

/* A child named vtkeye: preads of 1 + k % 5 bytes of /dev/zero at offsets k * KEYS_STRIDE, the whole run twice. */
static pid_t keys_offsets_reader(void)
{
	pid_t child = fork();
	char buf[8];
	int zero, pass, k;

	if (child)
		return child;
	prctl(PR_SET_NAME, "vtkeye");
	zero = open("/dev/zero", O_RDONLY);
	for (pass = 0; pass < 2; pass++)
		for (k = 0; k < KEYS_OFFSETS; k++)
			syscall(SYS_pread64, zero, buf, 1 + k % 5, (long long)k * KEYS_STRIDE);
	_exit(0);
}

/*
 * The kernel trace's sys_pread64 lines by their pos: field (hex), offset
 * k * KEYS_STRIDE in [k], their count: fields summed; lines at other
 * offsets in [KEYS_OFFSETS].
 */
static void keys_kernel_offsets(struct keys_seen by_offset[KEYS_OFFSETS + 1])
{
	char line[512];
	FILE *f = fopen(TRACEFS "/trace", "r");
	const char *pos, *count;
	long long at;
	int k;

	memset(by_offset, 0, (KEYS_OFFSETS + 1) * sizeof(by_offset[0]));
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, "sys_pread64(") || !(pos = strstr(line, "pos: ")) ||
		    !(count = strstr(line, "count: ")))
			continue;
		at = (long long)strtoull(pos + 5, NULL, 16);
		k = at % KEYS_STRIDE == 0 && at / KEYS_STRIDE < KEYS_OFFSETS ? (int)(at / KEYS_STRIDE) : KEYS_OFFSETS;
		by_offset[k].reads++;
		by_offset[k].bytes += (long)strtoul(count + 7, NULL, 16);
	}
	if (f)
		fclose(f);
}

/*
 * @at[args->pos[0]] = count() and @bytes[regs->r10] = sum(regs->dx): a
 * key root reads through an argument, and one it reads and sets aside
 * before the sum's, more of them than root has slots.
 */
static void keys_by_read(const char *name)
{
	struct keys_seen ft[KEYS_OFFSETS + 1], vt;
	long in_root, recorded, total = 0;
	char test[128], key[32], pair[48], err[4096];
	int k, first_wrong = -1;
	pid_t probe, e;

	snprintf(test, sizeof(test), "%s-read", name);
	if (tracefs_write("events/syscalls/sys_enter_pread64/filter", "comm == \"vtkeye\"") ||
	    tracefs_write("events/syscalls/sys_enter_pread64/enable", "1")) {
		report(test, FAIL, "the kernel's sys_enter_pread64 tracepoint did not start");
		return;
	}
	probe = keys_start("fn:vfs_read /comm == \"vtkeye\"/ { @at[args->pos[0]] = count(); }\n"
			   "fn:__x64_sys_pread64 /comm == \"vtkeye\"/ {\n"
			   "  @bytes[tid, ((struct pt_regs *)arg0)->r10] = sum(((struct pt_regs *)arg0)->dx); }",
			   "comm == \"vtkeye\"");
	if (probe < 0) {
		report(test, FAIL, "vtice probe or the kernel's tracepoints did not start (stderr above)");
		return;
	}
	e = keys_offsets_reader();
	waitpid(e, NULL, 0);
	keys_stop(probe);
	tracefs_write("events/syscalls/sys_enter_pread64/enable", "0");
	tracefs_write("events/syscalls/sys_enter_pread64/filter", "0");
	keys_kernel_offsets(ft);
	for (k = 0; k < KEYS_OFFSETS; k++) {
		snprintf(key, sizeof(key), "%lld", (long long)k * KEYS_STRIDE);
		snprintf(pair, sizeof(pair), "%d,%s", (int)e, key);	/* the child's tid: its pid, one thread */
		vt = (struct keys_seen){ keys_vtice_count("@at", key), keys_vtice_count("@bytes", pair) };
		total += ft[k].reads;
		if ((vt.reads != ft[k].reads || vt.bytes != ft[k].bytes) && first_wrong < 0) {
			first_wrong = k;
			printf("probe-keys: offset %s: vtice %ld preads, %ld bytes under [%s], the kernel's tracepoint %ld "
			       "of %ld\n", key, vt.reads, vt.bytes, pair, ft[k].reads, ft[k].bytes);
		}
	}
	in_root = keys_summary("\"root_counted\":");
	recorded = keys_summary("\"fn_hits\":");
	read_text(KEYS_ERR, err, sizeof(err));
	printf("probe-keys: %d offsets, %ld preads by the tracepoint (%ld elsewhere); %ld counted in root, %ld "
	       "recorded\n", KEYS_OFFSETS, total, ft[KEYS_OFFSETS].reads, in_root, recorded);
	if (total != 2 * KEYS_OFFSETS || ft[KEYS_OFFSETS].reads)
		report(test, FAIL, "the oracle saw %ld preads of vtkeye at its offsets and %ld elsewhere, the child made "
		       "%d", total, ft[KEYS_OFFSETS].reads, 2 * KEYS_OFFSETS);
	else if (!strstr(err, "counts them by key") || !strstr(err, "counts them and keeps their sum() value by key"))
		report(test, FAIL, "the armed line does not say root counts and sums by key: the numbers are not root's");
	else if (first_wrong >= 0)
		report(test, FAIL, "@at[%lld] or @bytes[%lld] is not the tracepoint's (above)", first_wrong * KEYS_STRIDE,
		       first_wrong * KEYS_STRIDE);
	else if (recorded < 2 * (KEYS_OFFSETS - VTICE_FETCH_KEYED_SLOTS) || in_root + recorded != 2 * total)
		report(test, FAIL, "%ld hits counted in root and %ld recorded, of %ld at two probes: at least %d should "
		       "have found no slot", in_root, recorded, 2 * total, 2 * (KEYS_OFFSETS - VTICE_FETCH_KEYED_SLOTS));
	else
		report(test, PASS,
		       "%d offsets (up to %lld) each pread twice under @at[args->pos[0]] = count() at vfs_read (the key "
		       "read by root through its pos) and @bytes[tid, regs->r10] = sum(regs->dx) at __x64_sys_pread64 "
		       "(the offset read and set aside by root as the key's word beside the tid, before the sum's "
		       "read): every offset's preads and bytes are the kernel's sys_enter_pread64 "
		       "tracepoint's; %ld hits counted in root's %d slots an address, the %ld that found none "
		       "recorded and counted by the console",
		       KEYS_OFFSETS, (KEYS_OFFSETS - 1) * KEYS_STRIDE, in_root, VTICE_FETCH_KEYED_SLOTS, recorded);
}

/*
 * @pos[comm] = sum(((struct file *)arg2)->f_pos) at ksys_read: arg2 is the
 * read's count (1), so each hit's read faults (page 0 is never mapped) and
 * gives 0. Root counts and sums the hits, so the console sees none of
 * them: the summary's unreadable_reads must still be one a read, counted
 * by root (root_unreadable_reads), against the tracepoint's reads.
 */
static void keys_unreadable(const char *name)
{
	struct keys_seen ft;
	long sum, in_root, recorded, unreadable, in_root_unreadable;
	char test[128], err[4096], said[96];
	pid_t probe, f;

	snprintf(test, sizeof(test), "%s-unreadable", name);
	probe = keys_start("fn:ksys_read /comm == \"vtkeyf\"/ { @pos[comm] = sum(((struct file *)arg2)->f_pos); }",
			   "comm == \"vtkeyf\"");
	if (probe < 0) {
		report(test, FAIL, "vtice probe or the kernel's tracepoint did not start (stderr above)");
		return;
	}
	f = keys_reader("vtkeyf", KEYS_READS_F, 1);
	waitpid(f, NULL, 0);
	keys_stop(probe);
	ft = keys_kernel_seen("vtkeyf", "sys_read(");
	sum = keys_vtice_count("@pos", "\"vtkeyf\"");
	in_root = keys_summary("\"root_counted\":");
	recorded = keys_summary("\"fn_hits\":");
	unreadable = keys_summary("\"unreadable_reads\":");
	in_root_unreadable = keys_summary("\"root_unreadable_reads\":");
	read_text(KEYS_ERR, err, sizeof(err));
	snprintf(said, sizeof(said), "%ld reads through arguments found their memory unmapped (they gave 0, %ld in root)",
		 ft.reads, ft.reads);
	printf("probe-keys: the kernel's tracepoint: vtkeyf %ld reads; vtice: @pos %ld, %ld counted in root, %ld "
	       "recorded, %ld unreadable reads (%ld in root)\n", ft.reads, sum, in_root, recorded, unreadable,
	       in_root_unreadable);
	if (ft.reads != KEYS_READS_F)
		report(test, FAIL, "the oracle saw %ld reads of vtkeyf, the child made %d", ft.reads, KEYS_READS_F);
	else if (in_root != ft.reads || recorded)
		report(test, FAIL, "%ld hits counted in root and %ld recorded, of %ld: root should count them all",
		       in_root, recorded, ft.reads);
	else if (sum != 0)
		report(test, FAIL, "@pos[vtkeyf] is %ld: a read that faults gives 0", sum);
	else if (unreadable != ft.reads || in_root_unreadable != ft.reads || !strstr(err, said))
		report(test, FAIL, "the summary counts %ld unreadable reads (%ld in root), not the %ld hits' one each, or "
		       "does not say '%s'", unreadable, in_root_unreadable, ft.reads, said);
	else
		report(test, PASS,
		       "@pos[comm] = sum(((struct file *)arg2)->f_pos) at ksys_read, whose read faults at every hit: "
		       "root counted the %ld hits the kernel's tracepoint saw, summed 0, and the summary counts %ld "
		       "reads found unmapped, all in root", in_root, unreadable);
}

int cmd_probe_keys(int argc, char **argv)
{
	(void)argc;
	if (access(TRACEFS "/events/syscalls/sys_enter_read/enable", W_OK))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	keys_by_comm(argv[0]);
	keys_past_slots(argv[0]);
	keys_by_function(argv[0]);
	keys_by_read(argv[0]);
	keys_unreadable(argv[0]);
	return 0;
}
