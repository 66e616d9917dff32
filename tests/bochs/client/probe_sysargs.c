// SPDX-License-Identifier: GPL-2.0
/*
 * probe-sysargs: the argument names args-> takes in a syscall:NAME probe
 * against the kernel's own: the fields of its sys_enter_NAME event, as
 * tracefs' events/syscalls/sys_enter_NAME/format lists them (past the
 * common_* fields and __syscall_nr). For each syscall below, vtice probe
 * --list must list the kernel's names, in the kernel's order:
 *   vtice probe --list 'syscall:openat, syscall:fstat, ...'
 *   syscall:fstat (the kernel's declaration)
 *       arg0  unsigned int fd
 *       arg1  struct stat __user *statbuf
 * and an argument openat does not have must be refused with the same names:
 *   vtice probe 'syscall:openat { printf("%d\n", args->vtice_none); }' --check
 *   ... error: syscall:openat has no argument 'vtice_none': it takes dfd, filename, flags, mode
 * fstat is number 5, which the kernel defines as newfstat (its event
 * sys_enter_newfstat): vtice finds a syscall's declaration by number.
 * The values args-> reads: probe-str (syscall:openat's args->dfd and
 * str(args->filename) against a kprobe) and probe (sum(args->count) of
 * reads against ftrace's sys_enter_read).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"
#include "spawn.h"

#define TRACEFS		"/sys/kernel/tracing"
#define SYSARGS_OUT	"/tmp/vtsysargs.out"

/* vtice's name (the uapi's) and the kernel's event's */
static const char *const kSyscalls[][2] = {
	{ "openat", "openat" }, { "fstat", "newfstat" }, { "execve", "execve" }, { "mmap", "mmap" },
};

/* The kernel's argument names of event sys_enter_EVENT, ", "-separated; 0 or -1. */
static int kernel_names(const char *event, char *out, size_t len)
{
	char path[160], line[256], *name, *end;
	FILE *f;

	snprintf(path, sizeof(path), TRACEFS "/events/syscalls/sys_enter_%s/format", event);
	f = fopen(path, "r");
	if (!f)
		return -1;
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		/* "\tfield:const char * filename;\toffset:24;..." */
		if (!(name = strstr(line, "field:")) || !(end = strchr(name, ';')))
			continue;
		*end = '\0';
		name = strrchr(name, ' ') ? strrchr(name, ' ') + 1 : name + 6;
		if (!strncmp(name, "common_", 7) || !strcmp(name, "__syscall_nr"))
			continue;
		snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? ", " : "", name);
	}
	fclose(f);
	return 0;
}

/* Runs vtice with args, its stdout and stderr to SYSARGS_OUT; its exit status, or -1. */
static int run_vtice(const char *const args[])
{
	int status = -1;
	pid_t probe = spawn_vtice_all(SYSARGS_OUT, args);

	if (probe > 0)
		waitpid(probe, &status, 0);
	return probe > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * `vtice probe --list` of every syscall's point at once: the names after
 * each "syscall:NAME (...)" line, from its "    argN  TYPE NAME" lines,
 * ", "-separated into names[i]; 0 or -1.
 */
static int vtice_listed(char names[][256], size_t n)
{
	char points[256] = "", line[512], *name;
	const char *const args[] = { "vtice", "probe", "--list", points, NULL };
	FILE *f;
	size_t i, at = n;

	for (i = 0; i < n; i++)
		snprintf(points + strlen(points), sizeof(points) - strlen(points), "%ssyscall:%s", i ? ", " : "",
			 kSyscalls[i][0]);
	if (run_vtice(args) != 0)
		return -1;
	f = fopen(SYSARGS_OUT, "r");
	while (f && fgets(line, sizeof(line), f)) {
		printf("probe-sysargs --list: %s", line);
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "syscall:", 8)) {
			for (at = 0; at < n && strncmp(line + 8, kSyscalls[at][0], strlen(kSyscalls[at][0])); at++)
				;
			if (at < n)
				names[at][0] = '\0';
		} else if (at < n && !strncmp(line, "    arg", 7) && (name = strrchr(line, ' '))) {
			name = strrchr(name, '*') ? strrchr(name, '*') + 1 : name + 1;
			snprintf(names[at] + strlen(names[at]), 256 - strlen(names[at]), "%s%s",
				 names[at][0] ? ", " : "", name);
		}
	}
	if (f)
		fclose(f);
	return f ? 0 : -1;
}

/* What vtice probe printed after "it takes " for an argument openat lacks; 0 or -1. */
static int vtice_refused_names(char *out, size_t len)
{
	const char *program = "syscall:openat { printf(\"%d\\n\", args->vtice_none); }";
	const char *const args[] = { "vtice", "probe", program, "--check", NULL };
	char line[512], *takes = NULL;
	FILE *err;
	int status = run_vtice(args);

	snprintf(out, len, "(no error line)");
	err = fopen(SYSARGS_OUT, "r");
	while (err && fgets(line, sizeof(line), err)) {
		printf("probe-sysargs refused: %s", line);
		if (!takes && strstr(line, "error") && (takes = strstr(line, "it takes "))) {
			takes[strcspn(takes, "\n")] = '\0';
			snprintf(out, len, "%s", takes + 9);
		}
	}
	if (err)
		fclose(err);
	return status > 0 && takes ? 0 : -1;
}

int cmd_probe_sysargs(int argc, char **argv)
{
	enum { N = sizeof(kSyscalls) / sizeof(kSyscalls[0]) };
	const char *name = argv[0];
	char kernel[N][256], listed[N][256] = { "" }, refused[512], shown[1024] = "";
	size_t i;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	for (i = 0; i < N; i++)
		if (kernel_names(kSyscalls[i][1], kernel[i], sizeof(kernel[i])))
			return report(name, FAIL, "no %s/events/syscalls/sys_enter_%s/format: no oracle", TRACEFS,
				      kSyscalls[i][1]);
	if (vtice_listed(listed, N))
		return report(name, FAIL, "vtice probe --list failed (its output is above)");
	for (i = 0; i < N; i++) {
		if (strcmp(listed[i], kernel[i]))
			return report(name, FAIL, "syscall:%s: vtice probe --list names '%s', sys_enter_%s's format '%s'",
				      kSyscalls[i][0], listed[i], kSyscalls[i][1], kernel[i]);
		snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), "%s%s (%s)", i ? "; " : "",
			 kSyscalls[i][0], kernel[i]);
	}
	if (vtice_refused_names(refused, sizeof(refused)) || strcmp(refused, kernel[0]))
		return report(name, FAIL, "syscall:openat: vtice did not refuse args->vtice_none naming the kernel's "
			      "arguments (%s); the kernel's: %s", refused, kernel[0]);
	return report(name, PASS, "vtice probe --list names each syscall's arguments as its sys_enter event's format "
		      "does, in order: %s; args->vtice_none refused with the same names", shown);
}
