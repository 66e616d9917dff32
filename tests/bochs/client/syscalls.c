// SPDX-License-Identifier: GPL-2.0
/*
 * `vtice trace syscalls` against a program whose syscalls are known: a
 * child named vtsys makes a fixed list of raw syscalls and keeps what the
 * kernel returned (the oracle) in shared memory, making no other syscall
 * until it exits. The trace of comm vtsys must be exactly that list, in
 * order, with those arguments and return values, between the exit of the
 * prctl that named the child and its exit_group.
 *
 * getpid calls of this process, before the trace and while it is armed
 * (a task the filter does not match), measure what the trap costs
 * (NAME-cost). NAME-busy: a second tracer is refused. NAME-killed: a
 * tracer killed with SIGKILL leaves no CPU trapping. NAME-bad-strings:
 * string slots the hypervisor cannot take are refused with EINVAL.
 * NAME-chosen: the child again under --syscalls openat,close: the trace is
 * exactly its openat and close calls, nothing of prctl or exit_group.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device.h"
#include "report.h"
#include "spawn.h"

#define TRACE_OUT	"/tmp/vtsys.trace"
#define TRACE_ERR	"/tmp/vtsys.err"
#define TRACE_OUT2	"/tmp/vtsys2.trace"	/* the tracers of the other checks */
#define TRACE_ERR2	"/tmp/vtsys2.err"
#define MAX_CALLS	16

struct call {
	const char *name;
	int nargs;
	long args[6];
	long ret;
};

struct oracle {
	int pid, n;
	char buf[64];
	struct call calls[MAX_CALLS];
};

static long record(struct oracle *o, const char *name, long nr, int nargs, long a0, long a1, long a2,
		   long a3)
{
	struct call *c = &o->calls[o->n++];
	long ret = syscall(nr, a0, a1, a2, a3);

	c->name = name;
	c->nargs = nargs;
	c->args[0] = a0;
	c->args[1] = a1;
	c->args[2] = a2;
	c->args[3] = a3;
	c->ret = ret < 0 ? -errno : ret;	/* the raw return value */
	return ret;
}

/* The child: nothing but the listed syscalls between prctl and _exit. */
static void vtsys(struct oracle *o)
{
	static const char version[] = "/proc/version", missing[] = "/vtice-no-such-file";
	static const char devnull[] = "/dev/null";
	long fd;

	prctl(PR_SET_NAME, "vtsys");
	o->pid = (int)record(o, "getpid", SYS_getpid, 0, 0, 0, 0, 0);
	fd = record(o, "openat", SYS_openat, 4, AT_FDCWD, (long)version, O_RDONLY, 0);
	record(o, "read", SYS_read, 3, fd, (long)o->buf, sizeof(o->buf), 0);
	record(o, "close", SYS_close, 1, fd, 0, 0, 0);
	record(o, "openat", SYS_openat, 4, AT_FDCWD, (long)missing, O_RDONLY, 0);
	fd = record(o, "openat", SYS_openat, 4, AT_FDCWD, (long)devnull, O_WRONLY, 0);
	record(o, "write", SYS_write, 3, fd, (long)version, 13, 0);
	record(o, "close", SYS_close, 1, fd, 0, 0, 0);
	record(o, "close", SYS_close, 1, 1000, 0, 0, 0);
	record(o, "getppid", SYS_getppid, 0, 0, 0, 0, 0);
	_exit(0);
}

/* The console's argument rule: small values in decimal, others in hex. */
static void format_value(char *out, size_t len, long v)
{
	if (v > -4096 && v < 4096)
		snprintf(out, len, "%ld", v);
	else
		snprintf(out, len, "%#lx", (unsigned long)v);
}

/* The line vtice must print for c, up to " = ": its return is checked apart. */
static void expected_line(const struct oracle *o, const struct call *c, char *out, size_t len)
{
	int i, n = snprintf(out, len, "vtsys(%d) %s(", o->pid, c->name);

	for (i = 0; i < c->nargs; i++) {
		char v[32];

		format_value(v, sizeof(v), c->args[i]);
		n += snprintf(out + n, len - n, "%s%s", i ? ", " : "", v);
	}
	snprintf(out + n, len - n, ") = ");
}

static int return_matches(const char *text, long ret)
{
	char want[64];

	if (ret < 0)
		snprintf(want, sizeof(want), "-1 %s (", strerrorname_np((int)-ret));
	else
		snprintf(want, sizeof(want), "%ld", ret);
	return ret < 0 ? !strncmp(text, want, strlen(want)) : !strcmp(text, want);
}

/* vtice trace syscalls --comm COMM [--syscalls LIST] -o out_path, its stderr to err_path. */
static pid_t start_trace_of(const char *comm, const char *syscalls, const char *out_path, const char *err_path)
{
	const char *const args[] = { "vtice", "trace", "syscalls", "--comm", comm, "-o", out_path,
				     "--duration", "3000", syscalls ? "--syscalls" : NULL, syscalls, NULL };

	return spawn_vtice(err_path, args);
}

static pid_t start_trace(const char *comm, const char *out_path, const char *err_path)
{
	return start_trace_of(comm, NULL, out_path, err_path);
}

/* The vtsys lines of the trace at path, with their line numbers dropped. */
static int read_vtsys_lines(const char *path, char lines[][256], int max)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < max) {
		line[strcspn(line, "\n")] = 0;
		printf("trace: %s\n", line);
		if (!strncmp(line, "vtsys(", 6))
			strcpy(lines[n++], line);
	}
	fclose(f);
	return n;
}

/* prctl's exit, the list, then exit_group with no exit. */
static int compare(const char *name, const struct oracle *o, char lines[][256], int n)
{
	char want[256];
	int i;

	if (n != o->n + 2)
		return report(name, FAIL, "%d vtsys lines, expected %d (the list, prctl's exit, exit_group)",
			      n, o->n + 2);
	if (!strstr(lines[0], "<... resumed> = 0"))
		return report(name, FAIL, "first line is not prctl's exit: %s", lines[0]);
	if (!strstr(lines[n - 1], "exit_group(0) = ? <unfinished>"))
		return report(name, FAIL, "last line is not exit_group: %s", lines[n - 1]);
	for (i = 0; i < o->n; i++) {
		const char *line = lines[i + 1];

		expected_line(o, &o->calls[i], want, sizeof(want));
		if (strncmp(line, want, strlen(want)) || !return_matches(line + strlen(want), o->calls[i].ret))
			return report(name, FAIL, "call %d: got '%s', expected '%s%ld'", i, line, want,
				      o->calls[i].ret);
	}
	return report(name, PASS, "%d of %d calls exactly as the program made them, with their return values",
		      o->n, o->n);
}

/*
 * Unarmed, nothing may exit on the syscall path (goal 0; one exit per
 * hundred calls means it does). Armed, a task the filter does not match
 * pays the trap: SYSCALL and SYSRET, two exits per call, and no more.
 */
static int report_cost(const char *name, const struct getpid_cost *unarmed, const struct getpid_cost *armed)
{
	figure_named(name, "unarmed_exits_per_call", "%.3f", unarmed->exits);
	figure_named(name, "unarmed_tsc_per_call", "%.0f", unarmed->tsc);
	figure_named(name, "armed_untraced_exits_per_call", "%.3f", armed->exits);
	figure_named(name, "armed_untraced_tsc_per_call", "%.0f", armed->tsc);
	figure_named(name, "armed_untraced_ratio", "%.2f", armed->tsc / unarmed->tsc);
	if (unarmed->exits >= 0.01)
		return report(name, FAIL, "%.3f exits per getpid with nothing armed", unarmed->exits);
	if (armed->exits < 1.99 || armed->exits > 2.05)
		return report(name, FAIL, "%.3f exits per untraced getpid while armed, expected 2",
			      armed->exits);
	return report(name, PASS, "exits per getpid: %.3f unarmed, %.3f armed for an untraced task",
		      unarmed->exits, armed->exits);
}

/* While one tracer owns the events, a second one is refused and says why. */
static void second_owner(const char *name)
{
	char test[128], text[512];
	pid_t second = start_trace("other", TRACE_OUT2, TRACE_ERR2);
	int status = 0;

	snprintf(test, sizeof(test), "%s-busy", name);
	waitpid(second, &status, 0);
	read_text(TRACE_ERR2, text, sizeof(text));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 1 && strstr(text, "owns the syscall events"))
		report(test, PASS, "a second tracer exits 1: %s", strtok(text, "\n"));
	else
		report(test, FAIL, "second tracer: status %#x, '%s'", status, text);
}

/* kill -9 of a tracer: closing /dev/vtice disarms every CPU. */
static void killed_owner(const char *name)
{
	char test[128];
	struct getpid_cost after;
	pid_t trace = start_trace("nobody", TRACE_OUT2, TRACE_ERR2);

	snprintf(test, sizeof(test), "%s-killed", name);
	if (trace < 0 || !wait_armed(trace, TRACE_ERR2, 120)) {
		report(test, FAIL, "the tracer did not arm");
		return;
	}
	kill(trace, SIGKILL);
	waitpid(trace, NULL, 0);
	if (measure_getpid(&after)) {
		report(test, FAIL, "no VM-exit counts");
		return;
	}
	figure_named(test, "exits_per_call", "%.3f", after.exits);
	if (after.exits < 0.01)
		report(test, PASS, "after kill -9 of the tracer, %.3f exits per getpid", after.exits);
	else
		report(test, FAIL, "after kill -9 of the tracer, still %.3f exits per getpid", after.exits);
}

/* errno of an ARM whose string slots are set by fill (0: it armed, and is disarmed again). */
static int arm_with_strings(int fd, void (*fill)(struct vtice_syscalls *))
{
	struct vtice_syscalls req = { .size = sizeof(req), .version = VTICE_ABI_VERSION, .op = VTICE_SYSCALLS_ARM };
	int err;

	fill(&req);
	err = ioctl(fd, VTICE_IOC_SYSCALLS, &req) ? errno : 0;
	if (!err) {
		req.op = VTICE_SYSCALLS_DISARM;
		ioctl(fd, VTICE_IOC_SYSCALLS, &req);
	}
	return err;
}

static void argument_seven(struct vtice_syscalls *r) { r->str_nr[0] = 257, r->str_arg[0] = 7; }
static void number_too_big(struct vtice_syscalls *r) { r->str_nr[0] = VTICE_SYSCALL_STRING_NR_LIMIT, r->str_arg[0] = 2; }
static void same_syscall_twice(struct vtice_syscalls *r)
{
	r->str_nr[0] = r->str_nr[5] = 257;
	r->str_arg[0] = r->str_arg[5] = 2;
}
static void eight_good_slots(struct vtice_syscalls *r)
{
	int i;

	for (i = 0; i < VTICE_SYSCALL_STRINGS_MAX; i++)
		r->str_nr[i] = (uint16_t)(i == 7 ? VTICE_SYSCALL_STRING_NR_LIMIT - 1 : i), r->str_arg[i] = (uint8_t)(1 + i % 6);
}

/* The string slots of VTICE_IOC_SYSCALLS: what root cannot take is -EINVAL, before anything arms. */
static void bad_strings(const char *name)
{
	char test[128];
	int fd = open_vtice(), seven, big, twice, good;

	snprintf(test, sizeof(test), "%s-bad-strings", name);
	if (fd < 0) {
		report(test, FAIL, "open %s: %s", VTICE_DEV, strerror(-fd));
		return;
	}
	seven = arm_with_strings(fd, argument_seven);
	big = arm_with_strings(fd, number_too_big);
	twice = arm_with_strings(fd, same_syscall_twice);
	good = arm_with_strings(fd, eight_good_slots);
	close(fd);
	if (seven == EINVAL && big == EINVAL && twice == EINVAL && good == 0)
		report(test, PASS, "argument 7, syscall %d and one syscall in two slots: EINVAL; eight good slots arm",
		       VTICE_SYSCALL_STRING_NR_LIMIT);
	else
		report(test, FAIL, "argument 7: %s, syscall %d: %s, twice: %s, eight good slots: %s", strerror(seven),
		       VTICE_SYSCALL_STRING_NR_LIMIT, strerror(big), strerror(twice), strerror(good));
}

/*
 * The child again under --syscalls openat,close: the hypervisor records
 * only those, so the trace is exactly the child's openat and close calls,
 * in order, each whole (entry and exit paired).
 */
static void chosen_syscalls(const char *name)
{
	char test[128], lines[MAX_CALLS + 8][256], want[256];
	struct oracle *o = mmap(NULL, sizeof(*o), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t trace, child;
	int n, i, k = 0;

	snprintf(test, sizeof(test), "%s-chosen", name);
	if (o == MAP_FAILED) {
		report(test, FAIL, "mmap: %s", strerror(errno));
		return;
	}
	trace = start_trace_of("vtsys", "openat,close", TRACE_OUT2, TRACE_ERR2);
	if (trace < 0 || !wait_armed(trace, TRACE_ERR2, 120)) {
		report(test, FAIL, "vtice trace syscalls --syscalls did not arm (see %s)", TRACE_ERR2);
		return;
	}
	child = fork();
	if (child == 0)
		vtsys(o);
	waitpid(child, NULL, 0);
	sleep(1);	/* the tracer polls every 20 ms */
	kill(trace, SIGINT);
	waitpid(trace, NULL, 0);
	system("cat " TRACE_ERR2);
	n = read_vtsys_lines(TRACE_OUT2, lines, MAX_CALLS + 8);
	for (i = 0; i < o->n && n >= 0; i++) {
		if (strcmp(o->calls[i].name, "openat") && strcmp(o->calls[i].name, "close"))
			continue;
		expected_line(o, &o->calls[i], want, sizeof(want));
		if (k >= n || strncmp(lines[k], want, strlen(want)) ||
		    !return_matches(lines[k] + strlen(want), o->calls[i].ret)) {
			report(test, FAIL, "line %d: got '%s', expected '%s%ld'", k, k < n ? lines[k] : "(none)", want,
			       o->calls[i].ret);
			munmap(o, sizeof(*o));
			return;
		}
		k++;
	}
	if (n == k && k == 6)
		report(test, PASS, "--syscalls openat,close: the child's %d openat and close calls alone, in order, "
		       "with their return values", k);
	else
		report(test, FAIL, "%d vtsys lines under --syscalls openat,close, expected the child's %d (6)", n, k);
	munmap(o, sizeof(*o));
}

int cmd_syscalls(int argc, char **argv)
{
	const char *name = argv[0];
	char lines[MAX_CALLS + 8][256], cost_name[128];
	struct getpid_cost unarmed, armed;
	struct oracle *o;
	pid_t trace, child;
	int n, status;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	o = mmap(NULL, sizeof(*o), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (o == MAP_FAILED)
		return report(name, FAIL, "mmap: %s", strerror(errno));
	snprintf(cost_name, sizeof(cost_name), "%s-cost", name);
	if (measure_getpid(&unarmed))
		return report(name, FAIL, "no VM-exit counts from /dev/vtice");
	trace = start_trace("vtsys", TRACE_OUT, TRACE_ERR);
	if (trace < 0 || !wait_armed(trace, TRACE_ERR, 120))
		return report(name, FAIL, "vtice trace syscalls did not arm (see %s)", TRACE_ERR);
	child = fork();
	if (child == 0)
		vtsys(o);
	waitpid(child, &status, 0);
	if (measure_getpid(&armed))
		return report(name, FAIL, "no VM-exit counts from /dev/vtice");
	second_owner(name);
	sleep(1);	/* the tracer polls every 20 ms */
	kill(trace, SIGINT);
	waitpid(trace, &status, 0);
	system("cat " TRACE_ERR);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return report(name, FAIL, "vtice trace syscalls exited with status %#x", status);
	report_cost(cost_name, &unarmed, &armed);
	killed_owner(name);
	bad_strings(name);
	chosen_syscalls(name);
	n = read_vtsys_lines(TRACE_OUT, lines, MAX_CALLS + 8);
	if (n < 0)
		return report(name, FAIL, "no %s", TRACE_OUT);
	return compare(name, o, lines, n);
}
