// SPDX-License-Identifier: GPL-2.0
/*
 * A child opens a fixed list of paths (one longer than the 128 bytes root
 * copies, two that do not exist) twice, once under the kernel's own probe
 * on do_sys_openat2, once under vtice probe's:
 *
 * probe-str: str() in a fn: probe against a kprobe event that fetches the
 *   filename argument as a user string (+0(%si):ustring) and dfd as a
 *   signed 32-bit number (%di:s32), child vtstr; the arguments named as the
 *   kernel's BTF names them (issue 24's own check):
 *     vtice probe 'fn:do_sys_openat2 /comm == "vtstr"/ { printf("%d %s\n", args->dfd, str(args->filename)); }'
 *   vtice's strings must be the kernel's, in order, each cut to 128 bytes,
 *   and each dfd the kernel's (AT_FDCWD, -100: an int, sign-extended).
 *   Then str() of the syscall's own argument, copied at its entry, child
 *   vtsys, against the same paths, the arguments named as the kernel's
 *   declaration of openat names them (its syscall metadata, which its
 *   sys_enter_openat event's format shows):
 *     vtice probe 'syscall:openat /comm == "vtsys"/ { printf("%d %s\n", args->dfd, str(args->filename)); }'
 * probe-ret: retval in fn:NAME:return against a kretprobe event's
 *   $retval, child vtret:
 *     vtice probe 'fn:do_sys_openat2:return /comm == "vtret"/ { printf("%d\n", retval); }'
 *   vtice's return values must be the kernel's, in order.
 * probe-addr: an addr: probe inside do_sys_openat2 against a kprobe event
 *   at the same offset, child vtaddr. The offset is the kernel's pick: the
 *   first past the ENDBR and the fentry call (+9) that its kprobes accept,
 *   which they do at an instruction's start only (-EILSEQ inside one):
 *     vtice probe 'addr:do_sys_openat2+OFF /comm == "vtaddr"/ { printf("%d %d %d\n", reg("rdi"), reg("rsp"), reg("rflags")); }'
 *   vtice's hits and their RDI must be the kernel's (its kprobe fetches
 *   %di); RSP (copied only when asked, VTICE_PROBES_MORE_REGS) at the
 *   kernel's %sp's depth in the child's kernel stack (another child's
 *   stack: the same path, the same depth, but for the kernel's own
 *   randomize_kstack_offset, up to 0x3ff bytes), RFLAGS with the kernel's
 *   %flags' IF. Then a read through a register there, against the
 *   kernel's kprobe at the offset fetching +0(%dx):x64:
 *     vtice probe 'addr:do_sys_openat2+OFF /comm == "vtaddr"/ { printf("%d\n", ((struct open_how *)reg("rdx"))->flags); }'
 *   And an offset the kernel refused as inside an instruction, and a data
 *   symbol, vtice must refuse too.
 * probe-module: args-> of a loaded module's function (msr_ioctl in Debian's
 *   msr.ko), typed by the module's BTF, against the kernel's kprobe
 *   fetching the same values by register; child vtmsr calls it. Then
 *   fn:msr:msr_read, the module's of a name the kernel has too, against
 *   the kernel's kprobe on msr:msr_read; child vtmsrr reads. Then two
 *   modules in one program, and a cast alone to cpuid.ko's own struct
 *   (children vtmod2, vtmod3). Then msr
 *   unloaded under the module's probes, and under a running vtice probe.
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

#define TRACEFS		"/sys/kernel/tracing"
#define STR_OUT		"/tmp/vtstr.json"
#define STR_ERR		"/tmp/vtstr.err"
#define STR_MAX		128	/* VTICE_PROBE_STR_MAX */
#define STACK_SIZE	16384	/* x86-64 THREAD_SIZE without KASAN: each task's kernel stack, aligned to it */
#define KSTACK_OFFSET_MAX 0x3ff	/* the kernel's randomize_kstack_offset: each syscall's stack moves this much at most */
#define IF_FLAG		0x200	/* RFLAGS.IF */
#define MAX_PATHS	8
#define PATH_LEN	512

struct paths {
	char p[MAX_PATHS][PATH_LEN];
	long dfd[MAX_PATHS];
	int n;
};

static void long_path(char *out)
{
	int i;

	strcpy(out, "/vtice");
	for (i = 0; i < 20; i++)
		strcat(out, "/abcdefghij");	/* 6 + 220 bytes: longer than STR_MAX */
}

/* What a child does once told to: the fixed paths opened, or read. */
typedef void (*child_work)(void);

/* Each byte of s read, so its pages are present (a volatile load the compiler cannot fold). */
static void touch_string(const char *s)
{
	while (*(const volatile char *)s)
		s++;
}

static void open_paths(void)
{
	static const char *const fixed[] = { "/proc/version", "/vtice-no-such-file", "/dev/null" };
	char longer[PATH_LEN];
	size_t i;

	long_path(longer);
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		int fd;

		/*
		 * The page of the string present first: the kernel's ustring fetch
		 * cannot fault it in, and gave "(fault)" for a path in .rodata
		 * the child had not touched yet (2026-12-05).
		 */
		touch_string(fixed[i]);
		fd = (int)syscall(SYS_openat, AT_FDCWD, fixed[i], O_RDONLY, 0);

		if (fd >= 0 && !strcmp(fixed[i], "/dev/null"))
			fsync(fd);	/* vfs_fsync_range's -EINVAL, an int in EAX (probe-ret) */
		close(fd);
	}
	close((int)syscall(SYS_openat, AT_FDCWD, longer, O_RDONLY, 0));
}

/* READ_NAMES's files, one read() each, in this order (probe-fetch). */
static const char *const read_paths[] = { "/proc/version", "/dev/null", "/proc/self/stat" };
#define READ_NAMES	"version null stat"

static void read_paths_once(void)
{
	char buf[64];
	size_t i;
	int fd;

	for (i = 0; i < sizeof(read_paths) / sizeof(read_paths[0]); i++) {
		fd = open(read_paths[i], O_RDONLY);
		if (fd >= 0 && read(fd, buf, sizeof(buf)) < 0)
			buf[0] = 0;
		close(fd);
	}
}

/* The child (named comm): work, once *go is set; no other syscall of note. */
static pid_t spawn_child(volatile int **go, const char *comm, child_work work)
{
	volatile int *flag = mmap(NULL, sizeof(*flag), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t child;

	if (flag == MAP_FAILED)
		return -1;
	*flag = 0;
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, comm);
		while (!*flag)
			;
		work();
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

/* Why the kernel refused an event definition, on the console (its own words). */
static void show_tracing_errors(const char *def)
{
	FILE *f = fopen(TRACEFS "/error_log", "r");
	char line[512];

	printf("kernel event '%s' refused or unused; tracefs error_log:\n", def);
	while (f && fgets(line, sizeof(line), f))
		printf("  %s", line);
	if (f)
		fclose(f);
}

/*
 * The child, named comm, under the kernel's own probe: kprobe event comm
 * defined by def ("p:comm ..." or "r:comm ..."), for the child's pid only.
 * The trace as a file to read (NULL if the event could not be set), for
 * kernel_event_end().
 */
static FILE *kernel_event_run_child(const char *comm, const char *def, child_work work)
{
	char pid[16], enable[96];
	volatile int *go;
	pid_t child = spawn_child(&go, comm, work);
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
	if (!ok)
		show_tracing_errors(def);
	return ok ? fopen(TRACEFS "/trace", "r") : NULL;
}

static FILE *kernel_event_run(const char *comm, const char *def)
{
	return kernel_event_run_child(comm, def, open_paths);
}

static int kernel_event_end(FILE *f)
{
	if (f)
		fclose(f);
	tracefs_write("set_event_pid", "");
	tracefs_write("kprobe_events", "");
	return f ? 0 : -1;
}

/*
 * The numbers after keys[0..k) (" di=", " sp=") on each line of the
 * kernel's trace of event comm defined by def, in order: out[k * line + i]
 * (0x-prefixed ones as hex); *n lines.
 */
static int kernel_columns_of(const char *comm, const char *def, child_work work, const char *const *keys, int k,
			     long *out, int *n)
{
	FILE *f = kernel_event_run_child(comm, def, work);
	char line[1024], *p;
	int i, found;

	*n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || *n == MAX_PATHS)
			continue;
		for (i = 0, found = 0; i < k; i++)
			if ((p = strstr(line, keys[i]))) {
				out[k * *n + i] = (long)strtoull(p + strlen(keys[i]), NULL, 0);
				found++;
			}
		if (found == k)
			(*n)++;
	}
	return kernel_event_end(f);
}

static int kernel_columns(const char *comm, const char *def, const char *const *keys, int k, long *out, int *n)
{
	return kernel_columns_of(comm, def, open_paths, keys, k, out, n);
}

/*
 * The name="..." string of each line of the kernel's trace of event comm
 * defined by def, in order, and its dfd=N if it has one:
 * ... vtstr: (do_sys_openat2+0x0/0x...) dfd=-100 name="/proc/version"
 */
static int kernel_strings_of(const char *comm, const char *def, struct paths *k)
{
	FILE *f = kernel_event_run(comm, def);
	char line[1024], *p, *end, *dfd;

	k->n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] != '#' && !strstr(line, "name=\""))
			printf("kernel event %s, no name=\"...\": %s", comm, line);
		if (line[0] == '#' || !(p = strstr(line, "name=\"")) || k->n == MAX_PATHS)
			continue;
		dfd = strstr(line, "dfd=");
		k->dfd[k->n] = dfd ? strtol(dfd + 4, NULL, 10) : 0;
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
static FILE *vtice_probe_run_child(const char *comm, const char *program, child_work work)
{
	const char *const args[] = { "vtice", "probe", program, "-o", STR_OUT, NULL };
	volatile int *go = NULL;
	pid_t probe, child;

	probe = spawn_vtice(STR_ERR, args);
	if (probe <= 0 || !wait_probe_armed(probe, STR_ERR, 120))
		return NULL;
	child = spawn_child(&go, comm, work);
	if (child > 0)
		run_opener(child, go);
	if (stop_probe(probe, STR_ERR) || child <= 0)
		return NULL;
	return fopen(STR_OUT, "r");
}

/*
 * What program printed for the child comm, a line each: "DFD PATH"
 * ({"type":"printf","text":"-100 /proc/version\u000a"}), or the path alone
 * when with_dfd is 0.
 */
static int vtice_strings_of(const char *comm, const char *program, int with_dfd, child_work work, struct paths *v)
{
	FILE *f = vtice_probe_run_child(comm, program, work);
	char line[2048], *p, *end;

	v->n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		printf("probe-str %s: %s", comm, line);
		if (!strstr(line, "\"type\":\"printf\"") || !(p = strstr(line, "\"text\":\"")) || v->n == MAX_PATHS)
			continue;
		p += 8;
		end = strstr(p, "\\u000a");
		if (end)
			*end = '\0';
		v->dfd[v->n] = with_dfd ? strtol(p, &p, 10) : 0;
		snprintf(v->p[v->n++], PATH_LEN, "%s", with_dfd && *p == ' ' ? p + 1 : p);
	}
	if (f)
		fclose(f);
	return f ? 0 : -1;
}

static int vtice_strings(const char *comm, const char *program, int with_dfd, struct paths *v)
{
	return vtice_strings_of(comm, program, with_dfd, open_paths, v);
}

/* The paths vt printed are the kernel's, in order, each cut to STR_MAX bytes; why not in why. */
static int same_paths(const struct paths *kernel, const struct paths *vt, char *why, size_t len)
{
	char want[PATH_LEN];
	int i;

	if (vt->n != kernel->n) {
		snprintf(why, len, "vtice printed %d strings, the kernel fetched %d", vt->n, kernel->n);
		return 0;
	}
	for (i = 0; i < kernel->n; i++) {
		snprintf(want, sizeof(want), "%.*s", STR_MAX, kernel->p[i]);
		if (strcmp(vt->p[i], want)) {
			snprintf(why, len, "open %d: vtice '%s', the kernel '%s'", i, vt->p[i], want);
			return 0;
		}
	}
	return 1;
}

int cmd_probe_str(int argc, char **argv)
{
	const char *name = argv[0];
	struct paths kernel, vt, sys;
	char why[1024];
	int i;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	if (kernel_strings_of("vtstr", "p:vtstr do_sys_openat2 dfd=%di:s32 name=+0(%si):ustring", &kernel) ||
	    kernel.n != 4)
		return report(name, FAIL, "the kernel's kprobe ustring fetch gave %d of 4 paths: no oracle", kernel.n);
	if (vtice_strings("vtstr", "fn:do_sys_openat2 /comm == \"vtstr\"/ { "
				   "printf(\"%d %s\\n\", args->dfd, str(args->filename)); }", 1, &vt))
		return report(name, FAIL, "vtice probe failed (its stderr is above)");
	if (!same_paths(&kernel, &vt, why, sizeof(why)))
		return report(name, FAIL, "fn:do_sys_openat2: %s", why);
	for (i = 0; i < kernel.n; i++)
		if (vt.dfd[i] != kernel.dfd[i])
			return report(name, FAIL, "open %d: vtice's args->dfd %ld, the kernel's %%di:s32 %ld", i,
				      vt.dfd[i], kernel.dfd[i]);
	/* The same from the syscall's entry, the path read in user memory (openat's filename, argument 1). */
	if (vtice_strings("vtsys", "syscall:openat /comm == \"vtsys\"/ { "
				   "printf(\"%d %s\\n\", args->dfd, str(args->filename)); }", 1, &sys))
		return report(name, FAIL, "vtice probe (syscall:openat) failed (its stderr is above)");
	if (!same_paths(&kernel, &sys, why, sizeof(why)))
		return report(name, FAIL, "syscall:openat: %s", why);
	for (i = 0; i < kernel.n; i++)
		if (sys.dfd[i] != kernel.dfd[i])
			return report(name, FAIL, "open %d: syscall:openat's args->dfd %ld, the kernel's %%di:s32 %ld", i,
				      sys.dfd[i], kernel.dfd[i]);
	return report(name, PASS, "%d paths in order, as the kernel's own kprobe fetched them (the %zu-byte one cut "
		      "to %d bytes), each with args->dfd %ld as its %%di:s32; syscall:openat's args->dfd and "
		      "str(args->filename) the same", kernel.n, strlen(kernel.p[3]), STR_MAX, kernel.dfd[0]);
}

/* The numbers after key ("ret=") in the kernel's trace of event comm defined by def, in order. */
static int kernel_numbers(const char *comm, const char *def, const char *key, long *out, int *n)
{
	const char *const keys[] = { key };

	return kernel_columns(comm, def, keys, 1, out, n);
}

/*
 * The k numbers each printf of program printed, in order
 * ({"type":"printf","text":"-2 140 582\u000a"}): out[k * line + i]; *n lines.
 */
static int vtice_columns_of(const char *comm, const char *program, child_work work, const char *echo, int k,
			    long *out, int *n)
{
	FILE *f = vtice_probe_run_child(comm, program, work);
	char line[2048], *p;
	int i;

	*n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		printf("%s: %s", echo, line);
		if (!strstr(line, "\"type\":\"printf\"") || !(p = strstr(line, "\"text\":\"")) || *n == MAX_PATHS)
			continue;
		for (p += 8, i = 0; i < k; i++)
			out[k * *n + i] = strtol(p, &p, 10);
		(*n)++;
	}
	if (f)
		fclose(f);
	return f ? 0 : -1;
}

static int vtice_columns(const char *comm, const char *program, const char *echo, int k, long *out, int *n)
{
	return vtice_columns_of(comm, program, open_paths, echo, k, out, n);
}

/* The numbers program printed, one per printf, in order. */
static int vtice_numbers(const char *comm, const char *program, const char *echo, long *out, int *n)
{
	return vtice_columns(comm, program, echo, 1, out, n);
}

/*
 * An int return: vfs_fsync_range of /dev/null (no fsync op) returns
 * -EINVAL in EAX. vtice's retval, cut to the BTF return type, must be the
 * kernel kretprobe's $retval:s32, also when root tests "retval < 0".
 * opened: the four do_sys_openat2 returns, for the report.
 */
static int probe_ret_int(const char *name, const long *opened)
{
	long kernel[MAX_PATHS], vt[MAX_PATHS], tested[MAX_PATHS];	/* the readers fill up to MAX_PATHS */
	int nk, nv, nt;

	if (kernel_numbers("vtfsync", "r:vtfsync vfs_fsync_range ret=$retval:s32", " ret=", kernel, &nk) || nk != 1)
		return report(name, FAIL, "the kernel's kretprobe on vfs_fsync_range gave %d of 1 return: no oracle", nk);
	if (vtice_numbers("vtfsync", "fn:vfs_fsync_range:return /comm == \"vtfsync\"/ { printf(\"%d\\n\", retval); }",
			  "probe-ret vfs_fsync_range", vt, &nv) ||
	    vtice_numbers("vtfsync", "fn:vfs_fsync_range:return /comm == \"vtfsync\" && retval < 0/ { "
				     "printf(\"%d\\n\", retval); }", "probe-ret retval < 0", tested, &nt))
		return report(name, FAIL, "vtice probe (vfs_fsync_range) failed (its stderr is above)");
	if (nv != 1 || vt[0] != kernel[0] || nt != 1 || tested[0] != kernel[0])
		return report(name, FAIL, "vfs_fsync_range's int return: the kernel %ld; vtice %ld (%d lines), with "
			      "retval < 0 tested in root %ld (%d lines)", kernel[0], nv ? vt[0] : 0, nv,
			      nt ? tested[0] : 0, nt);
	return report(name, PASS, "4 returns in order, as the kernel's own kretprobe saw them: %ld %ld %ld %ld; "
		      "vfs_fsync_range's int %ld as its $retval:s32, also through retval < 0 tested in root",
		      opened[0], opened[1], opened[2], opened[3], kernel[0]);
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
	return probe_ret_int(name, kernel);
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
	static const char *const keys[] = { " di=", " sp=", " fl=" };
	char def[128], program[256], inside_why[512], data_why[512];
	long kernel[3 * MAX_PATHS], vt[3 * MAX_PATHS];
	int at, inside, nk, nv, i;
	long depth, how_flags, rdi, rsp, rflags, kernel_rsp, kernel_rflags;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	if (kernel_offsets(&at, &inside))
		return report(name, FAIL, "the kernel's kprobes took no offset in do_sys_openat2+9..63: no oracle");
	snprintf(def, sizeof(def), "p:vtaddr do_sys_openat2+%d di=%%di:s64 sp=%%sp:x64 fl=%%flags:x64", at);
	if (kernel_columns("vtaddr", def, keys, 3, kernel, &nk) || nk != 4)
		return report(name, FAIL, "the kernel's kprobe at +%d saw %d of the child's 4 opens: no oracle", at, nk);
	snprintf(program, sizeof(program),
		 "addr:do_sys_openat2+%d /comm == \"vtaddr\"/ { "
		 "printf(\"%%d %%d %%d\\n\", reg(\"rdi\"), reg(\"rsp\"), reg(\"rflags\")); }", at);
	if (vtice_columns("vtaddr", program, "probe-addr", 3, vt, &nv))
		return report(name, FAIL, "vtice probe failed (its stderr is above)");
	if (nv != nk)
		return report(name, FAIL, "addr:do_sys_openat2+%d: vtice saw %d hits, the kernel's kprobe %d", at, nv,
			      nk);
	for (i = 0; i < nk; i++) {
		if (vt[3 * i] != kernel[3 * i])
			return report(name, FAIL, "hit %d: vtice's reg(\"rdi\") %ld, the kernel's %%di %ld", i, vt[3 * i],
				      kernel[3 * i]);
		/*
		 * Another child, another kernel stack (16 KiB, THREAD_SIZE-aligned):
		 * the same path puts RSP at the same depth in it, give or take the
		 * kernel's randomize_kstack_offset, which moves each syscall's
		 * stack by up to KSTACK_OFFSET_MAX (0x3ff) bytes.
		 */
		depth = labs((vt[3 * i + 1] & (STACK_SIZE - 1)) - (kernel[3 * i + 1] & (STACK_SIZE - 1)));
		if (depth > KSTACK_OFFSET_MAX)
			return report(name, FAIL, "hit %d: vtice's reg(\"rsp\") %#lx, the kernel's %%sp %#lx: %#lx apart in "
				      "their stacks, more than randomize_kstack_offset's %#x", i, vt[3 * i + 1],
				      kernel[3 * i + 1], depth, KSTACK_OFFSET_MAX);
		if ((vt[3 * i + 2] & IF_FLAG) != (kernel[3 * i + 2] & IF_FLAG))
			return report(name, FAIL, "hit %d: vtice's reg(\"rflags\") %#lx, the kernel's %%flags %#lx: "
				      "IF differs", i, vt[3 * i + 2], kernel[3 * i + 2]);
	}
	rdi = vt[0];
	rsp = vt[1];
	rflags = vt[2];
	kernel_rsp = kernel[1];
	kernel_rflags = kernel[2];
	/* A read through a register there, against the kernel's fetch through the same one. */
	snprintf(def, sizeof(def), "p:vtaddr do_sys_openat2+%d hf=+0(%%dx):x64", at);
	if (kernel_numbers("vtaddr", def, " hf=", kernel, &nk) || nk != 4)
		return report(name, FAIL, "the kernel's kprobe fetch through %%dx at +%d saw %d of 4 opens: no oracle",
			      at, nk);
	snprintf(program, sizeof(program), "addr:do_sys_openat2+%d /comm == \"vtaddr\"/ { "
		 "printf(\"%%d\\n\", ((struct open_how *)reg(\"rdx\"))->flags); }", at);
	if (vtice_columns("vtaddr", program, "probe-addr", 1, vt, &nv) || nv != nk)
		return report(name, FAIL, "addr:do_sys_openat2+%d with a read through reg(\"rdx\"): vtice printed %d "
			      "of the kernel's %d hits", at, nv, nk);
	for (i = 0; i < nk; i++)
		if (vt[i] != kernel[i])
			return report(name, FAIL, "hit %d: vtice's ((struct open_how *)reg(\"rdx\"))->flags %ld, the "
				      "kernel's +0(%%dx) %ld", i, vt[i], kernel[i]);
	how_flags = kernel[0];
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
		      "there fetched %%di, reg(\"rsp\") %#lx in its stack (the kernel's %%sp %#lx), reg(\"rflags\") "
		      "%#lx (the kernel's %#lx); ((struct open_how *)reg(\"rdx\"))->flags %#lx as its +0(%%dx); +%d "
		      "refused as the kernel refused it (%s); addr:jiffies refused (%s)",
		      at, nv, rdi, rsp & (STACK_SIZE - 1), kernel_rsp & (STACK_SIZE - 1), rflags, kernel_rflags, how_flags,
		      inside, inside_why, data_why);
}

/*
 * probe-fetch: reads through arguments, run by root at each hit (fetch
 * programs). do_sys_openat2's how->flags and how->mode against the
 * kernel's own kprobe fetching the same u64s (+0(%dx) and +8(%dx): struct
 * open_how is uapi, flags then mode), child vtfetch:
 *   vtice probe 'fn:do_sys_openat2 /comm == "vtfetch"/ { printf("%d %d\n", args->how->flags, args->how->mode); }'
 * Then a chain of two pointers and two embedded structs, child vtread,
 * which reads READ_NAMES's files once each: the names vfs_read's file has
 * in the dentry cache are the files' own names, in order, and the first
 * element of the dentry's inline name array is each name's first byte:
 *   vtice probe 'fn:vfs_read /comm == "vtread"/ { printf("%d %s\n", ((struct file *)arg0)->f_path.dentry->d_iname[0],
 *                str(((struct file *)arg0)->f_path.dentry->d_name.name)); }'
 * Then through a return value, typed by the function's BTF (struct file
 * *), child vtfilp, which opens the same files: the names of the files
 * do_filp_open returns are theirs, in order:
 *   vtice probe 'fn:do_filp_open:return /comm == "vtfilp"/ {
 *                printf("%s\n", str(retval->f_path.dentry->d_name.name)); }'
 * (Not getname_flags: on Debian's 6.1 getname reaches it by a tail call to
 * a split-off part, which neither the kernel's kretprobe on getname_flags
 * nor a probe on its RETs sees.)
 * And the current task, child vtcur reading the same files: its tgid is
 * pid, its parent is this process and its comm its own:
 *   vtice probe 'fn:vfs_read /comm == "vtcur" && curtask->tgid == pid/ {
 *                printf("%d %s\n", curtask->real_parent->tgid, str(curtask->comm)); }'
 * And an index root computes at the hit, child vtfd reading the same files:
 * the file behind ksys_read's fd in the task's own fd table is named as
 * the file the child read:
 *   vtice probe 'fn:ksys_read /comm == "vtfd"/ {
 *                printf("%d %s\n", arg0, str(curtask->files->fdt->fd[arg0]->f_path.dentry->d_name.name)); }'
 * and the same file through an index root adds up from two registers,
 * one times a number, and a constant (each read's count is 64, so it is
 * arg0 again), child vtfd2:
 *   ... fd[(arg2 - 64) * 3 + arg0] ...
 */
int cmd_probe_fetch(int argc, char **argv)
{
	static const char *const keys[] = { " flags=", " mode=" };
	const char *name = argv[0];
	long kernel[2 * MAX_PATHS], vt[2 * MAX_PATHS];
	char names[256] = "", opened_names[256] = "", fd_names[256] = "", sum_names[256] = "";
	struct paths read, opened, task, by_fd, by_sum;
	int nk, nv, i;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	if (kernel_columns("vtfetch", "p:vtfetch do_sys_openat2 flags=+0(%dx):x64 mode=+8(%dx):x64", keys, 2,
			   kernel, &nk) || nk != 4)
		return report(name, FAIL, "the kernel's kprobe fetch of how gave %d of 4 opens: no oracle", nk);
	if (vtice_columns("vtfetch", "fn:do_sys_openat2 /comm == \"vtfetch\"/ { printf(\"%d %d\\n\", "
				     "args->how->flags, args->how->mode); }", "probe-fetch vtfetch", 2, vt, &nv))
		return report(name, FAIL, "vtice probe failed (its stderr is above)");
	if (nv != nk)
		return report(name, FAIL, "vtice printed %d opens, the kernel fetched %d", nv, nk);
	for (i = 0; i < 2 * nk; i++)
		if (vt[i] != kernel[i])
			return report(name, FAIL, "open %d: vtice's how->%s %ld, the kernel's %ld", i / 2,
				      i % 2 ? "mode" : "flags", vt[i], kernel[i]);
	if (vtice_strings_of("vtread", "fn:vfs_read /comm == \"vtread\"/ { printf(\"%d %s\\n\", "
				       "((struct file *)arg0)->f_path.dentry->d_iname[0], "
				       "str(((struct file *)arg0)->f_path.dentry->d_name.name)); }", 1, read_paths_once,
			     &read))
		return report(name, FAIL, "vtice probe (fn:vfs_read) failed (its stderr is above)");
	for (i = 0; i < read.n; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? " " : "", read.p[i]);
	if (strcmp(names, READ_NAMES))
		return report(name, FAIL, "fn:vfs_read's file names: vtice '%s', the files read '%s'", names, READ_NAMES);
	/* A short name lives in the dentry's own d_iname: its first byte is the name's. */
	for (i = 0; i < read.n; i++)
		if (read.dfd[i] != read.p[i][0])
			return report(name, FAIL, "read %d: vtice's d_iname[0] %ld, the name '%s' starts with %d", i,
				      read.dfd[i], read.p[i], read.p[i][0]);
	if (vtice_strings_of("vtfilp", "fn:do_filp_open:return /comm == \"vtfilp\"/ { printf(\"%s\\n\", "
				       "str(retval->f_path.dentry->d_name.name)); }", 0, read_paths_once, &opened))
		return report(name, FAIL, "vtice probe (fn:do_filp_open:return) failed (its stderr is above)");
	for (i = 0; i < opened.n; i++)
		snprintf(opened_names + strlen(opened_names), sizeof(opened_names) - strlen(opened_names), "%s%s",
			 i ? " " : "", opened.p[i]);
	if (strcmp(opened_names, READ_NAMES))
		return report(name, FAIL, "fn:do_filp_open:return's file names: vtice '%s', the files opened '%s'",
			      opened_names, READ_NAMES);
	if (vtice_strings_of("vtcur", "fn:vfs_read /comm == \"vtcur\" && curtask->tgid == pid/ { "
				      "printf(\"%d %s\\n\", curtask->real_parent->tgid, str(curtask->comm)); }", 1,
			     read_paths_once, &task))
		return report(name, FAIL, "vtice probe (curtask) failed (its stderr is above)");
	if (task.n != read.n)
		return report(name, FAIL, "curtask: %d of the child's %d reads printed (curtask->tgid == pid held for "
			      "those)", task.n, read.n);
	for (i = 0; i < task.n; i++)
		if (task.dfd[i] != getpid() || strcmp(task.p[i], "vtcur"))
			return report(name, FAIL, "curtask at read %d: real_parent->tgid %ld and comm '%s'; the child's "
				      "parent is %d and its comm vtcur", i, task.dfd[i], task.p[i], (int)getpid());
	if (vtice_strings_of("vtfd", "fn:ksys_read /comm == \"vtfd\"/ { printf(\"%d %s\\n\", arg0, "
				     "str(curtask->files->fdt->fd[arg0]->f_path.dentry->d_name.name)); }", 1,
			     read_paths_once, &by_fd))
		return report(name, FAIL, "vtice probe (fd[arg0]) failed (its stderr is above)");
	for (i = 0; i < by_fd.n; i++)
		snprintf(fd_names + strlen(fd_names), sizeof(fd_names) - strlen(fd_names), "%s%s", i ? " " : "",
			 by_fd.p[i]);
	if (strcmp(fd_names, READ_NAMES))
		return report(name, FAIL, "curtask->files->fdt->fd[arg0] at ksys_read: vtice '%s', the files read '%s'",
			      fd_names, READ_NAMES);
	if (vtice_strings_of("vtfd2", "fn:ksys_read /comm == \"vtfd2\"/ { printf(\"%d %s\\n\", arg0, "
				      "str(curtask->files->fdt->fd[(arg2 - 64) * 3 + arg0]->f_path.dentry->d_name.name)); }",
			     1, read_paths_once, &by_sum))
		return report(name, FAIL, "vtice probe (fd[(arg2 - 64) * 3 + arg0]) failed (its stderr is above)");
	for (i = 0; i < by_sum.n; i++)
		snprintf(sum_names + strlen(sum_names), sizeof(sum_names) - strlen(sum_names), "%s%s", i ? " " : "",
			 by_sum.p[i]);
	if (strcmp(sum_names, READ_NAMES))
		return report(name, FAIL, "fd[(arg2 - 64) * 3 + arg0] at ksys_read (each read's count 64): vtice '%s', the "
			      "files read '%s'", sum_names, READ_NAMES);
	return report(name, PASS, "%d opens' how->flags, how->mode as the kernel's kprobe fetched them (flags %#lx); "
		      "%d reads' names through file->f_path.dentry->d_name.name: %s (d_iname[0] their first "
		      "bytes); retval->...->d_name.name at do_filp_open's returns: %s; curtask's tgid, "
		      "real_parent->tgid (%d), comm: the child's; fd[arg0] at ksys_read (fds %ld..%ld): %s; "
		      "fd[(arg2 - 64) * 3 + arg0]: %s", nk, kernel[0], read.n, names, opened_names, (int)getpid(),
		      by_fd.dfd[0], by_fd.dfd[by_fd.n - 1], fd_names, sum_names);
}

/*
 * Child vtmsr's ioctls on /dev/cpu/0/msr (probe-module): at each of
 * msr_positions (lseek'd; the MSR a read there would read), command
 * msr_commands[i] with argument msr_args[i]; msr.ko's msr_ioctl knows
 * neither command (-ENOTTY) but is entered with them.
 */
static const long msr_positions[] = { 0x10, 0xc0000080 };
static const long msr_commands[] = { 0x1234, 0xc0de };
static const long msr_args[] = { 0x5678, 0x7ffffffff00d };
#define MSR_CALLS	2

static void ioctl_msrs_once(void)
{
	int fd = open("/dev/cpu/0/msr", O_RDONLY), i;

	for (i = 0; fd >= 0 && i < MSR_CALLS; i++)
		if (lseek(fd, msr_positions[i], SEEK_SET) != msr_positions[i] ||
		    (ioctl(fd, (unsigned int)msr_commands[i], msr_args[i]) < 0 && errno != ENOTTY))
			break;
	if (fd >= 0)
		close(fd);
}

/*
 * fn:NAME:return in a module's text: msr_ioctl's returns (its RETs, found
 * in the module's text read through /proc/kcore) give what the kernel's
 * kretprobe's $retval gives: -ENOTTY for each of the child's commands.
 * 0, or why not in why.
 */
static int module_returns(char *why, size_t len)
{
	static const char *const keys[] = { " ret=" };
	long kernel[MAX_PATHS], vt[MAX_PATHS];
	int nk, nv, i;

	if (kernel_columns_of("vtmsr", "r:vtmsr msr_ioctl ret=$retval:s64", ioctl_msrs_once, keys, 1, kernel, &nk) ||
	    nk != MSR_CALLS) {
		snprintf(why, len, "the kernel's kretprobe on msr_ioctl gave %d of %d returns: no oracle", nk, MSR_CALLS);
		return -1;
	}
	if (vtice_columns_of("vtmsr", "fn:msr_ioctl:return /comm == \"vtmsr\"/ { printf(\"%d\\n\", retval); }",
			     ioctl_msrs_once, "probe-module msr_ioctl:return", 1, vt, &nv)) {
		snprintf(why, len, "vtice probe (fn:msr_ioctl:return) failed (its stderr is above)");
		return -1;
	}
	for (i = 0; i < nk && nv == nk; i++)
		if (vt[i] != kernel[i] || kernel[i] != -ENOTTY)
			break;
	if (nv != nk || i < nk) {
		snprintf(why, len, "msr_ioctl's returns: vtice %d (the first %ld), the kernel's kretprobe %d (the first "
			 "%ld), -ENOTTY expected", nv, nv ? vt[0] : 0, nk, kernel[0]);
		return -1;
	}
	return 0;
}

/*
 * Child vtmsrr's reads of /dev/cpu/0/msr (probe-module, fn:MODULE:NAME):
 * msr_counts[i] bytes by pread at msr_positions[i] (each 8 bytes one
 * read of that MSR).
 */
static const long msr_counts[] = { 8, 24 };

static void pread_msrs_once(void)
{
	uint64_t buf[3];
	int fd = open("/dev/cpu/0/msr", O_RDONLY), i;

	for (i = 0; fd >= 0 && i < MSR_CALLS; i++)
		if (pread(fd, buf, (size_t)msr_counts[i], msr_positions[i]) != msr_counts[i])
			break;
	if (fd >= 0)
		close(fd);
}

/*
 * fn:MODULE:NAME: msr_read is the kernel's (arch/x86/lib/msr.c) and
 * msr.ko's; fn:msr:msr_read is the module's, entered at each pread with
 * its count and a pointer to the position. The kernel's own kprobe on
 * "msr:msr_read" fetches both (%dx, +0(%cx)); vtice names them by msr.ko's
 * BTF (args->count, args->ppos[0]). 0, or why not in why.
 */
static int module_named(char *why, size_t len)
{
	static const char *const keys[] = { " count=", " pos=" };
	long kernel[2 * MAX_PATHS], vt[2 * MAX_PATHS];
	int nk, nv, i;

	if (kernel_columns_of("vtmsrr", "p:vtmsrr msr:msr_read count=%dx:u64 pos=+0(%cx):u64", pread_msrs_once,
			      keys, 2, kernel, &nk) || nk != MSR_CALLS) {
		snprintf(why, len, "the kernel's kprobe on msr:msr_read gave %d of %d reads: no oracle", nk, MSR_CALLS);
		return -1;
	}
	for (i = 0; i < nk; i++)
		if (kernel[2 * i] != msr_counts[i] || kernel[2 * i + 1] != msr_positions[i]) {
			snprintf(why, len, "read %d: the kernel's kprobe saw count %ld pos %#lx; the child read %ld at "
				 "%#lx", i, kernel[2 * i], kernel[2 * i + 1], msr_counts[i], msr_positions[i]);
			return -1;
		}
	if (vtice_columns_of("vtmsrr", "fn:msr:msr_read /comm == \"vtmsrr\"/ { printf(\"%d %d\\n\", args->count, "
				       "args->ppos[0]); }", pread_msrs_once, "probe-module msr:msr_read", 2, vt, &nv)) {
		snprintf(why, len, "vtice probe (fn:msr:msr_read) failed (its stderr is above)");
		return -1;
	}
	for (i = 0; i < nk && nv == nk; i++)
		if (vt[2 * i] != kernel[2 * i] || vt[2 * i + 1] != kernel[2 * i + 1])
			break;
	if (nv != nk || i < nk) {
		snprintf(why, len, "fn:msr:msr_read: vtice printed %d reads (the first count %ld pos %#lx), the kernel's "
			 "kprobe %d (%ld %#lx)", nv, nv ? vt[0] : 0, nv ? vt[1] : 0, nk, kernel[0], kernel[1]);
		return -1;
	}
	return 0;
}

/*
 * Child vtmod2's reads (probe-module, two modules in one program): 8 bytes
 * of /dev/cpu/0/msr at msr_positions[0], then 16 of /dev/cpu/0/cpuid at
 * CPUID_POSITION (leaf 1, subleaf 0: the position is the leaf).
 */
#define CPUID_POSITION	1L
#define CPUID_BYTES	16L

static void pread_two_modules_once(void)
{
	uint64_t buf[2];
	int msr = open("/dev/cpu/0/msr", O_RDONLY), cpuid = open("/dev/cpu/0/cpuid", O_RDONLY);

	if (msr >= 0 && cpuid >= 0 && pread(msr, buf, 8, msr_positions[0]) == 8)
		(void)pread(cpuid, buf, CPUID_BYTES, CPUID_POSITION);
	if (msr >= 0)
		close(msr);
	if (cpuid >= 0)
		close(cpuid);
}

/* Child vtmod3's CPUID read (probe-module, a cast alone), on CPU 0 so that cpuid_read's call runs there, in the child. */
static void pread_cpuid_on_cpu0(void)
{
	uint64_t buf[2];
	int cpuid;

	pin_to_cpu(0);
	cpuid = open("/dev/cpu/0/cpuid", O_RDONLY);
	if (cpuid >= 0) {
		(void)pread(cpuid, buf, CPUID_BYTES, CPUID_POSITION);
		close(cpuid);
	}
}

/*
 * A cast to a module's own type with no args-> in the program: the probe
 * point (fn:cpuid:cpuid_smp_cpuid) lends cpuid.ko's BTF, where struct
 * cpuid_regs_done is; its regs.eax is the leaf asked for, as the kernel's
 * kprobe fetches it through the argument (+0(%di)). 0, or why not.
 */
static int module_cast_alone(char *why, size_t len)
{
	static const char *const keys[] = { " leaf=" };
	long kernel[MAX_PATHS], vt[MAX_PATHS];
	int nk = 0, nv;

	if (kernel_columns_of("vtmod3", "p:vtmod3 cpuid:cpuid_smp_cpuid leaf=+0(%di):u32", pread_cpuid_on_cpu0, keys, 1,
			      kernel, &nk) || nk != 1 || kernel[0] != CPUID_POSITION) {
		snprintf(why, len, "the kernel's kprobe on cpuid:cpuid_smp_cpuid gave %d of 1 calls (leaf %ld): no "
			 "oracle", nk, nk ? kernel[0] : 0);
		return -1;
	}
	if (vtice_columns_of("vtmod3", "fn:cpuid:cpuid_smp_cpuid /comm == \"vtmod3\"/ { printf(\"%d\\n\", "
				       "((struct cpuid_regs_done *)arg0)->regs.eax); }", pread_cpuid_on_cpu0,
			     "probe-module a cast alone", 1, vt, &nv)) {
		snprintf(why, len, "vtice probe (a cast to cpuid's struct cpuid_regs_done) failed (its stderr is above)");
		return -1;
	}
	if (nv != 1 || vt[0] != kernel[0]) {
		snprintf(why, len, "a cast alone: vtice printed %d lines (the first %ld); the kernel's kprobe leaf %ld", nv,
			 nv ? vt[0] : 0, kernel[0]);
		return -1;
	}
	return 0;
}

/*
 * Two modules' functions typed in one program: msr.ko's msr_read and
 * cpuid.ko's cpuid_read, each with args-> from its own BTF (split on the
 * kernel's, so their own type ids overlap). Each line must be what the
 * kernel's kprobe on that module's function fetched by register (%dx, and
 * +0(%cx) through ppos). cpuid.ko is loaded for this alone. 0, or why not.
 */
static int module_two(char *why, size_t len)
{
	static const char *const keys[] = { " count=", " pos=" };
	long msr[2 * MAX_PATHS], cpuid[2 * MAX_PATHS], vt[3 * MAX_PATHS];
	int nm = 0, nc = 0, nv, ret = -1;

	if (system("insmod /lib/vtice/cpuid.ko")) {
		snprintf(why, len, "cpuid.ko did not load");
		return -1;
	}
	if (kernel_columns_of("vtmod2", "p:vtmod2 msr:msr_read count=%dx:u64 pos=+0(%cx):u64",
			      pread_two_modules_once, keys, 2, msr, &nm) || nm != 1 ||
	    kernel_columns_of("vtmod2", "p:vtmod2 cpuid:cpuid_read count=%dx:u64 pos=+0(%cx):u64",
			      pread_two_modules_once, keys, 2, cpuid, &nc) || nc != 1 ||
	    cpuid[0] != CPUID_BYTES || cpuid[1] != CPUID_POSITION) {
		snprintf(why, len, "the kernel's kprobes on msr:msr_read and cpuid:cpuid_read gave %d and %d of 1 "
			 "read (cpuid: count %ld pos %ld): no oracle", nm, nc, nc ? cpuid[0] : 0, nc ? cpuid[1] : 0);
		goto out;
	}
	if (vtice_columns_of("vtmod2", "fn:msr:msr_read /comm == \"vtmod2\"/ { printf(\"1 %d %d\\n\", args->count, "
				       "args->ppos[0]); } fn:cpuid:cpuid_read /comm == \"vtmod2\"/ { printf(\"2 %d %d\\n\", "
				       "args->count, args->ppos[0]); }", pread_two_modules_once, "probe-module two modules",
			     3, vt, &nv)) {
		snprintf(why, len, "vtice probe (fn:msr:msr_read and fn:cpuid:cpuid_read) failed (its stderr is above)");
		goto out;
	}
	if (nv != 2 || vt[0] != 1 || vt[1] != msr[0] || vt[2] != msr[1] || vt[3] != 2 || vt[4] != cpuid[0] ||
	    vt[5] != cpuid[1]) {
		snprintf(why, len, "two modules: vtice printed %d lines (the first %ld %ld %ld); the kernel's kprobes "
			 "1 %ld %ld then 2 %ld %ld", nv, nv ? vt[0] : 0, nv ? vt[1] : 0, nv ? vt[2] : 0, msr[0],
			 msr[1], cpuid[0], cpuid[1]);
		goto out;
	}
	ret = module_cast_alone(why, len);
out:
	if (system("rmmod cpuid") && !ret) {
		snprintf(why, len, "rmmod cpuid failed");
		ret = -1;
	}
	return ret;
}

/*
 * A module holding a probe goes: with a probe armed at msr_ioctl (a raw
 * VTICE_IOC_PROBES), rmmod msr must succeed (the module is not held), the
 * kernel log must say the probes were removed before it went, the armed
 * count must be 0 and the same address refused (EINVAL) from then on.
 * msr.ko is loaded again after. 0, or why not in why.
 */
static int module_going(char *why, size_t len)
{
	static struct vtice_probes req;
	uint64_t fn = 0;
	int fd = open_vtice(), ret = -1, err;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.version = VTICE_ABI_VERSION;
	req.op = VTICE_PROBES_ARM;
	req.count = 1;
	if (fd < 0 || ksym_lookup("msr_ioctl", &fn)) {
		snprintf(why, len, "no /dev/vtice or no msr_ioctl in /proc/kallsyms");
		goto out;
	}
	req.addrs[0] = fn;
	if (ioctl(fd, VTICE_IOC_PROBES, &req)) {
		snprintf(why, len, "arming a probe at msr_ioctl (%#llx): %s", (unsigned long long)fn, strerror(errno));
		goto out;
	}
	if (system("rmmod msr")) {
		snprintf(why, len, "rmmod msr failed while a probe sat in it");
		goto out;
	}
	if (system("dmesg | grep -q 'vtice: probes removed: module msr is going'")) {
		snprintf(why, len, "the kernel log does not say the probes were removed as msr went");
		goto out;
	}
	req.op = VTICE_PROBES_QUERY;
	if (ioctl(fd, VTICE_IOC_PROBES, &req) || req.armed) {
		snprintf(why, len, "after rmmod, %u probes armed (query: %s)", req.armed, strerror(errno));
		goto out;
	}
	req.op = VTICE_PROBES_ARM;
	err = ioctl(fd, VTICE_IOC_PROBES, &req) ? errno : 0;
	if (err != EINVAL) {
		snprintf(why, len, "arming at msr's old msr_ioctl after it went: %s, not EINVAL", strerror(err));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (access("/sys/module/msr", F_OK) && system("insmod /lib/vtice/msr.ko") && !ret) {
		snprintf(why, len, "msr.ko did not load again");
		ret = -1;
	}
	return ret;
}

/*
 * The console under a module's going: `vtice probe 'fn:msr_ioctl ...'`
 * (nothing else armed) runs, msr goes; the console must say the probes
 * were removed and end the run itself, long before its --duration, with
 * status 0. msr.ko is loaded again after. 0, or why not in why.
 */
static int module_going_run(char *why, size_t len)
{
	const char *const args[] = { "vtice", "probe", "fn:msr_ioctl { @calls = count(); }", "--duration", "120", NULL };
	char err[4096];
	int status = -1, waited, ret = -1;
	pid_t probe = spawn_vtice(STR_ERR, args);

	if (probe <= 0 || !wait_probe_armed(probe, STR_ERR, 60)) {
		snprintf(why, len, "vtice probe on fn:msr_ioctl did not arm");
		goto out;
	}
	if (system("rmmod msr")) {
		snprintf(why, len, "rmmod msr failed under vtice probe");
		goto out;
	}
	for (waited = 0; waited < 60 && waitpid(probe, &status, WNOHANG) == 0; waited++)
		sleep(1);
	read_text(STR_ERR, err, sizeof(err));
	if (waited == 60) {
		snprintf(why, len, "vtice probe still ran 60 s after msr went");
		goto out;
	}
	probe = 0;
	if (!strstr(err, "1 of 1 probe points were removed under the run") || !strstr(err, "the run ends") ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("probe-module going: %s", err);
		snprintf(why, len, "vtice probe after msr went: status %#x, and its stderr (above) does not say the "
			 "probes were removed and the run ended", status);
		goto out;
	}
	ret = 0;
out:
	if (probe > 0) {
		kill(probe, SIGKILL);
		waitpid(probe, NULL, 0);
	}
	if (access("/sys/module/msr", F_OK) && system("insmod /lib/vtice/msr.ko") && !ret) {
		snprintf(why, len, "msr.ko did not load again");
		ret = -1;
	}
	return ret;
}

/*
 * probe-module: args->NAME of a loaded module's function, typed by the
 * module's own BTF (/sys/kernel/btf/msr, split on the kernel's): Debian's
 * msr.ko (the rig loads it), whose msr_ioctl(file, ioc, arg) prototype is
 * in the module's BTF alone. The kernel's own kprobe on msr_ioctl fetches
 * ioc (%si:u32) and arg (%dx) by register; vtice names them by BTF, and
 * reads the file's position through the kernel's struct file:
 *   vtice probe 'fn:msr_ioctl /comm == "vtmsr"/ { printf("%d %d %d\n", args->ioc, args->arg, args->file->f_pos); }'
 * ioc and arg must be the kernel's, and all three the child's. Then
 * module_returns() and module_going().
 */
int cmd_probe_module(int argc, char **argv)
{
	static const char *const keys[] = { " ioc=", " arg=" };
	const char *name = argv[0];
	long kernel[2 * MAX_PATHS], vt[3 * MAX_PATHS];
	char why[256];
	int nk, nv, i;

	(void)argc;
	if (access(VTICE_BIN, X_OK))
		return report(name, SKIP, "%s not in the initramfs", VTICE_BIN);
	if (access("/sys/kernel/btf/msr", R_OK))
		return report(name, FAIL, "no /sys/kernel/btf/msr: msr.ko is not loaded, or its BTF was not");
	if (kernel_columns_of("vtmsr", "p:vtmsr msr_ioctl ioc=%si:u32 arg=%dx:u64", ioctl_msrs_once, keys, 2, kernel,
			      &nk) || nk != MSR_CALLS)
		return report(name, FAIL, "the kernel's kprobe on msr_ioctl gave %d of %d calls: no oracle", nk,
			      MSR_CALLS);
	for (i = 0; i < MSR_CALLS; i++)
		if (kernel[2 * i] != msr_commands[i] || kernel[2 * i + 1] != msr_args[i])
			return report(name, FAIL, "call %d: the kernel's kprobe saw ioc %#lx arg %#lx; the child "
				      "passed %#lx %#lx", i, kernel[2 * i], kernel[2 * i + 1], msr_commands[i],
				      msr_args[i]);
	if (vtice_columns_of("vtmsr", "fn:msr_ioctl /comm == \"vtmsr\"/ { printf(\"%d %d %d\\n\", args->ioc, "
				      "args->arg, args->file->f_pos); }", ioctl_msrs_once, "probe-module msr_ioctl", 3,
			     vt, &nv))
		return report(name, FAIL, "vtice probe (fn:msr_ioctl, args-> from msr's BTF) failed (its stderr is "
			      "above)");
	if (nv != nk)
		return report(name, FAIL, "vtice printed %d calls, the kernel's kprobe saw %d", nv, nk);
	for (i = 0; i < nk; i++)
		if (vt[3 * i] != kernel[2 * i] || vt[3 * i + 1] != kernel[2 * i + 1] || vt[3 * i + 2] != msr_positions[i])
			return report(name, FAIL, "call %d: vtice's ioc %#lx arg %#lx f_pos %#lx; the kernel's ioc %#lx "
				      "arg %#lx, the child's position %#lx", i, vt[3 * i], vt[3 * i + 1], vt[3 * i + 2],
				      kernel[2 * i], kernel[2 * i + 1], msr_positions[i]);
	if (module_returns(why, sizeof(why)) || module_named(why, sizeof(why)) || module_two(why, sizeof(why)) ||
	    module_going(why, sizeof(why)) || module_going_run(why, sizeof(why)))
		return report(name, FAIL, "%s", why);
	return report(name, PASS, "msr_ioctl in module msr, typed by the module's BTF: args->ioc and args->arg as "
		      "the kernel's kprobe fetched %%si and %%dx (%#lx %#lx, %#lx %#lx), args->file->f_pos the "
		      "child's lseek positions (%#lx, %#lx); fn:msr_ioctl:return's retval -ENOTTY at each return "
		      "as the kernel's kretprobe's $retval; fn:msr:msr_read (the module's, not the kernel's "
		      "msr_read): args->count and args->ppos[0] as the kernel's kprobe on msr:msr_read fetched "
		      "them at each pread; fn:msr:msr_read and fn:cpuid:cpuid_read in one program, each typed "
		      "by its module's BTF, as the kernel's kprobes; a cast alone to cpuid.ko's struct "
		      "cpuid_regs_done at fn:cpuid:cpuid_smp_cpuid, the leaf as the kernel's kprobe; rmmod msr "
		      "under a probe: the probes "
		      "removed first, its old address "
		      "refused, msr.ko loaded again; under a running vtice probe: it said so and ended the run",
		      vt[0], vt[1], vt[3], vt[4], vt[2], vt[5]);
}
