// SPDX-License-Identifier: GPL-2.0
/*
 * probe-sysargs: the argument names args-> takes in a syscall:NAME probe
 * against the kernel's own: the fields of its sys_enter_NAME event, as
 * tracefs' events/syscalls/sys_enter_NAME/format lists them (past the
 * common_* fields and __syscall_nr). For each syscall below, vtice must
 * refuse an argument the syscall does not have and list the kernel's
 * names, in the kernel's order:
 *   vtice probe 'syscall:fstat { printf("%d\n", args->vtice_none); }'
 *   ... error: syscall:fstat has no argument 'vtice_none': it takes fd, statbuf
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
#define SYSARGS_ERR	"/tmp/vtsysargs.err"

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

/* What vtice probe printed after "it takes " for an argument syscall lacks; 0 or -1. */
static int vtice_names(const char *syscall, char *out, size_t len)
{
	char program[128], line[512], *takes = NULL;
	const char *const args[] = { "vtice", "probe", program, "--check", NULL };
	int status = -1;
	pid_t probe;
	FILE *err;

	snprintf(program, sizeof(program), "syscall:%s { printf(\"%%d\\n\", args->vtice_none); }", syscall);
	probe = spawn_vtice(SYSARGS_ERR, args);
	if (probe > 0)
		waitpid(probe, &status, 0);
	snprintf(out, len, "(no error line)");
	err = fopen(SYSARGS_ERR, "r");
	while (err && fgets(line, sizeof(line), err)) {
		printf("probe-sysargs %s: %s", syscall, line);
		if (!takes && strstr(line, "error") && (takes = strstr(line, "it takes "))) {
			takes[strcspn(takes, "\n")] = '\0';
			snprintf(out, len, "%s", takes + 9);
		}
	}
	if (err)
		fclose(err);
	return probe > 0 && status != 0 && takes ? 0 : -1;
}

int cmd_probe_sysargs(int argc, char **argv)
{
	const char *name = argv[0];
	char kernel[256], vtice[512], shown[1024] = "";
	size_t i;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	for (i = 0; i < sizeof(kSyscalls) / sizeof(kSyscalls[0]); i++) {
		if (kernel_names(kSyscalls[i][1], kernel, sizeof(kernel)))
			return report(name, FAIL, "no %s/events/syscalls/sys_enter_%s/format: no oracle", TRACEFS,
				      kSyscalls[i][1]);
		if (vtice_names(kSyscalls[i][0], vtice, sizeof(vtice)))
			return report(name, FAIL, "syscall:%s: vtice did not refuse args->vtice_none with the names "
				      "(%s); the kernel's: %s", kSyscalls[i][0], vtice, kernel);
		if (strcmp(vtice, kernel))
			return report(name, FAIL, "syscall:%s: vtice's names '%s', sys_enter_%s's '%s'", kSyscalls[i][0],
				      vtice, kSyscalls[i][1], kernel);
		snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), "%s%s (%s)", i ? "; " : "",
			 kSyscalls[i][0], kernel);
	}
	return report(name, PASS, "args-> names each syscall's arguments as its sys_enter event's format does, in "
		      "order: %s", shown);
}
