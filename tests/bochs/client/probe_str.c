// SPDX-License-Identifier: GPL-2.0
/*
 * A child opens a fixed list of paths (one longer than the 128 bytes root
 * copies, two that do not exist) twice, once under the kernel's own probe
 * on do_sys_openat2, once under vtice probe's:
 *
 * probe-str: str() in a fn: probe against a kprobe event that fetches the
 *   filename argument as a user string (+0(%si):ustring), child vtstr:
 *     vtice probe 'fn:do_sys_openat2 /comm == "vtstr"/ { printf("%s\n", str(arg1)); }'
 *   vtice's strings must be the kernel's, in order, each cut to 128 bytes.
 * probe-ret: retval in fn:NAME:return against a kretprobe event's
 *   $retval, child vtret:
 *     vtice probe 'fn:do_sys_openat2:return /comm == "vtret"/ { printf("%d\n", retval); }'
 *   vtice's return values must be the kernel's, in order.
 * probe-addr: an addr: probe inside do_sys_openat2 against a kprobe event
 *   at the same offset, child vtaddr. The offset is the kernel's pick: the
 *   first past the ENDBR and the fentry call (+9) that its kprobes accept,
 *   which they do at an instruction's start only (-EILSEQ inside one):
 *     vtice probe 'addr:do_sys_openat2+OFF /comm == "vtaddr"/ { printf("%d\n", reg("rdi")); }'
 *   vtice's hits and their RDI must be the kernel's (its kprobe fetches
 *   %di); and an offset the kernel refused as inside an instruction, and a
 *   data symbol, vtice must refuse too.
 */
#define _GNU_SOURCE
#include <fcntl.h>
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
#define STR_OUT		"/tmp/vtstr.json"
#define STR_ERR		"/tmp/vtstr.err"
#define STR_MAX		128	/* VTICE_PROBE_STR_MAX */
#define MAX_PATHS	8
#define PATH_LEN	512

struct paths {
	char p[MAX_PATHS][PATH_LEN];
	int n;
};

static void long_path(char *out)
{
	int i;

	strcpy(out, "/vtice");
	for (i = 0; i < 20; i++)
		strcat(out, "/abcdefghij");	/* 6 + 220 bytes: longer than STR_MAX */
}

/* The child (named comm): the paths, once *go is set; no other openat. */
static pid_t spawn_opener(volatile int **go, const char *comm)
{
	static const char *const fixed[] = { "/proc/version", "/vtice-no-such-file", "/dev/null" };
	volatile int *flag = mmap(NULL, sizeof(*flag), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char longer[PATH_LEN];
	pid_t child;
	size_t i;

	if (flag == MAP_FAILED)
		return -1;
	*flag = 0;
	long_path(longer);
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, comm);
		while (!*flag)
			;
		for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
			close((int)syscall(SYS_openat, AT_FDCWD, fixed[i], O_RDONLY, 0));
		close((int)syscall(SYS_openat, AT_FDCWD, longer, O_RDONLY, 0));
		_exit(0);
	}
	*go = flag;
	return child;
}

static void run_opener(pid_t child, volatile int *go)
{
	*go = 1;
	waitpid(child, NULL, 0);
	munmap((void *)go, sizeof(*go));
}

/*
 * The child, named comm, under the kernel's own probe: kprobe event comm
 * defined by def ("p:comm ..." or "r:comm ..."), for the child's pid only.
 * The trace as a file to read (NULL if the event could not be set), for
 * kernel_event_end().
 */
static FILE *kernel_event_run(const char *comm, const char *def)
{
	char pid[16], enable[96];
	volatile int *go;
	pid_t child = spawn_opener(&go, comm);
	int ok;

	if (child < 0)
		return NULL;
	snprintf(pid, sizeof(pid), "%d", child);
	snprintf(enable, sizeof(enable), "events/kprobes/%s/enable", comm);
	ok = !tracefs_write("kprobe_events", def) && !tracefs_write("set_event_pid", pid) &&
	     !tracefs_write("trace", "") && !tracefs_write(enable, "1") && !tracefs_write("tracing_on", "1");
	run_opener(child, go);
	tracefs_write("tracing_on", "0");
	tracefs_write(enable, "0");
	return ok ? fopen(TRACEFS "/trace", "r") : NULL;
}

static int kernel_event_end(FILE *f)
{
	if (f)
		fclose(f);
	tracefs_write("set_event_pid", "");
	tracefs_write("kprobe_events", "");
	return f ? 0 : -1;
}

/* ... vtstr: (do_sys_openat2+0x0/0x...) name="/proc/version" */
static int kernel_strings(struct paths *k)
{
	FILE *f = kernel_event_run("vtstr", "p:vtstr do_sys_openat2 name=+0(%si):ustring");
	char line[1024], *p, *end;

	k->n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !(p = strstr(line, "name=\"")) || k->n == MAX_PATHS)
			continue;
		p += 6;
		end = strrchr(p, '"');
		if (end)
			*end = '\0';
		snprintf(k->p[k->n++], PATH_LEN, "%s", p);
	}
	return kernel_event_end(f);
}

/*
 * The child, named comm, under vtice probe running program (its JSON
 * output to STR_OUT): that output as a file to read, or NULL.
 */
static FILE *vtice_probe_run(const char *comm, const char *program)
{
	const char *const args[] = { "vtice", "probe", program, "-o", STR_OUT, NULL };
	volatile int *go = NULL;
	pid_t probe, child;

	probe = spawn_vtice(STR_ERR, args);
	if (probe <= 0 || !wait_probe_armed(probe, STR_ERR, 120))
		return NULL;
	child = spawn_opener(&go, comm);
	if (child > 0)
		run_opener(child, go);
	if (stop_probe(probe, STR_ERR) || child <= 0)
		return NULL;
	return fopen(STR_OUT, "r");
}

/* {"type":"printf","text":"/proc/version\u000a"} */
static int vtice_strings(struct paths *v)
{
	FILE *f = vtice_probe_run("vtstr",
				  "fn:do_sys_openat2 /comm == \"vtstr\"/ { printf(\"%s\\n\", str(arg1)); }");
	char line[2048], *p, *end;

	v->n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		printf("probe-str: %s", line);
		if (!strstr(line, "\"type\":\"printf\"") || !(p = strstr(line, "\"text\":\"")) || v->n == MAX_PATHS)
			continue;
		p += 8;
		end = strstr(p, "\\u000a");
		if (end)
			*end = '\0';
		snprintf(v->p[v->n++], PATH_LEN, "%s", p);
	}
	if (f)
		fclose(f);
	return f ? 0 : -1;
}

int cmd_probe_str(int argc, char **argv)
{
	const char *name = argv[0];
	struct paths kernel, vt;
	char want[PATH_LEN];
	int i;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	if (kernel_strings(&kernel) || kernel.n != 4)
		return report(name, FAIL, "the kernel's kprobe ustring fetch gave %d of 4 paths: no oracle", kernel.n);
	if (vtice_strings(&vt))
		return report(name, FAIL, "vtice probe failed (its stderr is above)");
	if (vt.n != kernel.n)
		return report(name, FAIL, "vtice printed %d strings, the kernel fetched %d", vt.n, kernel.n);
	for (i = 0; i < kernel.n; i++) {
		snprintf(want, sizeof(want), "%.*s", STR_MAX, kernel.p[i]);
		if (strcmp(vt.p[i], want))
			return report(name, FAIL, "open %d: vtice '%s', the kernel '%s'", i, vt.p[i], want);
	}
	return report(name, PASS, "%d paths in order, as the kernel's own kprobe fetched them (the %zu-byte one cut "
		      "to %d bytes)", kernel.n, strlen(kernel.p[3]), STR_MAX);
}

/* The numbers after key ("ret=") in the kernel's trace of event comm defined by def, in order. */
static int kernel_numbers(const char *comm, const char *def, const char *key, long *out, int *n)
{
	FILE *f = kernel_event_run(comm, def);
	char line[1024], *p;

	*n = 0;
	while (f && fgets(line, sizeof(line), f))
		if (line[0] != '#' && (p = strstr(line, key)) && *n < MAX_PATHS)
			out[(*n)++] = strtol(p + strlen(key), NULL, 10);
	return kernel_event_end(f);
}

/* The numbers program printed, one per printf ({"type":"printf","text":"-2\u000a"}), in order. */
static int vtice_numbers(const char *comm, const char *program, const char *echo, long *out, int *n)
{
	FILE *f = vtice_probe_run(comm, program);
	char line[2048], *p;

	*n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		printf("%s: %s", echo, line);
		if (strstr(line, "\"type\":\"printf\"") && (p = strstr(line, "\"text\":\"")) && *n < MAX_PATHS)
			out[(*n)++] = strtol(p + 8, NULL, 10);
	}
	if (f)
		fclose(f);
	return f ? 0 : -1;
}

int cmd_probe_ret(int argc, char **argv)
{
	const char *name = argv[0];
	long kernel[MAX_PATHS], vt[MAX_PATHS];
	int nk, nv, i;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	if (kernel_numbers("vtret", "r:vtret do_sys_openat2 ret=$retval:s64", " ret=", kernel, &nk) || nk != 4)
		return report(name, FAIL, "the kernel's kretprobe gave %d of 4 returns: no oracle", nk);
	if (vtice_numbers("vtret", "fn:do_sys_openat2:return /comm == \"vtret\"/ { printf(\"%d\\n\", retval); }",
			  "probe-ret", vt, &nv))
		return report(name, FAIL, "vtice probe failed (its stderr is above)");
	if (nv != nk)
		return report(name, FAIL, "vtice printed %d return values, the kernel's kretprobe saw %d", nv, nk);
	for (i = 0; i < nk; i++)
		if (vt[i] != kernel[i])
			return report(name, FAIL, "open %d: vtice %ld, the kernel %ld", i, vt[i], kernel[i]);
	return report(name, PASS, "%d returns in order, as the kernel's own kretprobe saw them: %ld %ld %ld %ld", nk,
		      kernel[0], kernel[1], kernel[2], kernel[3]);
}

/*
 * The first offset from +9 up that the kernel's kprobes take in
 * do_sys_openat2 (*at), and the first they refuse past it (*inside): the
 * kernel's own decoder says where instructions start.
 */
static int kernel_offsets(int *at, int *inside)
{
	char def[64];
	int off;

	*at = *inside = -1;
	for (off = 9; off < 64 && (*at < 0 || *inside < 0); off++) {
		snprintf(def, sizeof(def), "p:vtaddr do_sys_openat2+%d", off);
		if (!tracefs_write("kprobe_events", def)) {
			tracefs_write("kprobe_events", "");
			if (*at < 0)
				*at = off;
		} else if (*at >= 0) {
			*inside = off;
		}
	}
	return *at >= 0 && *inside >= 0 ? 0 : -1;
}

/* Whether vtice probe refused program (a failed exit); why: its first error line. */
static int vtice_refuses(const char *program, char *why, size_t len)
{
	const char *const args[] = { "vtice", "probe", program, "--duration", "1", NULL };
	char line[512];
	int status = -1;
	pid_t probe = spawn_vtice(STR_ERR, args);
	FILE *err;

	if (probe > 0)
		waitpid(probe, &status, 0);
	snprintf(why, len, "no error line");
	err = fopen(STR_ERR, "r");
	while (err && fgets(line, sizeof(line), err))
		if (strstr(line, "error") || !strncmp(line, "vtice probe: ", 13)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(why, len, "%s", line);
			break;
		}
	if (err)
		fclose(err);
	return probe > 0 && status != 0;
}

int cmd_probe_addr(int argc, char **argv)
{
	const char *name = argv[0];
	char def[96], program[192], inside_why[512], data_why[512];
	long kernel[MAX_PATHS], vt[MAX_PATHS];
	int at, inside, nk, nv, i;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	if (kernel_offsets(&at, &inside))
		return report(name, FAIL, "the kernel's kprobes took no offset in do_sys_openat2+9..63: no oracle");
	snprintf(def, sizeof(def), "p:vtaddr do_sys_openat2+%d di=%%di:s64", at);
	if (kernel_numbers("vtaddr", def, " di=", kernel, &nk) || nk != 4)
		return report(name, FAIL, "the kernel's kprobe at +%d saw %d of the child's 4 opens: no oracle", at, nk);
	snprintf(program, sizeof(program),
		 "addr:do_sys_openat2+%d /comm == \"vtaddr\"/ { printf(\"%%d\\n\", reg(\"rdi\")); }", at);
	if (vtice_numbers("vtaddr", program, "probe-addr", vt, &nv))
		return report(name, FAIL, "vtice probe failed (its stderr is above)");
	if (nv != nk)
		return report(name, FAIL, "addr:do_sys_openat2+%d: vtice saw %d hits, the kernel's kprobe %d", at, nv,
			      nk);
	for (i = 0; i < nk; i++)
		if (vt[i] != kernel[i])
			return report(name, FAIL, "hit %d: vtice's reg(\"rdi\") %ld, the kernel's %%di %ld", i, vt[i],
				      kernel[i]);
	snprintf(program, sizeof(program), "addr:do_sys_openat2+%d { exit(); }", inside);
	if (!vtice_refuses(program, inside_why, sizeof(inside_why)) || !strstr(inside_why, "is inside an instruction"))
		return report(name, FAIL, "+%d, inside an instruction by the kernel's kprobes: vtice said '%s'", inside,
			      inside_why);
	/* kallsyms says 'D'. (The module's own check, NX in the kernel's page
	 * tables, sees nothing here: the rig boots with rodata=off.) */
	if (!vtice_refuses("addr:jiffies { exit(); }", data_why, sizeof(data_why)) ||
	    !strstr(data_why, "is not code"))
		return report(name, FAIL, "addr:jiffies (data): vtice said '%s'", data_why);
	return report(name, PASS, "addr:do_sys_openat2+%d: %d hits, reg(\"rdi\") %ld ... as the kernel's kprobe "
		      "there fetched %%di; +%d refused as the kernel refused it (%s); addr:jiffies refused (%s)", at, nv,
		      vt[0], inside, inside_why, data_why);
}
