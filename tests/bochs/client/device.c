// SPDX-License-Identifier: GPL-2.0
/*
 * Checks of /dev/vtice itself: every CPU virtualized with its exits counted,
 * and the device node only root can open.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device.h"
#include "report.h"

int open_vtice(void)
{
	int fd = open(VTICE_DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int vtice_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

int vtice_status(int fd, struct vtice_status *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->version = VTICE_ABI_VERSION;
	return vtice_ioctl(fd, VTICE_IOC_STATUS, st);
}

int vtice_cpu_stats(int fd, uint32_t cpu, struct vtice_cpu_stats *cs)
{
	memset(cs, 0, sizeof(*cs));
	cs->size = sizeof(*cs);
	cs->version = VTICE_ABI_VERSION;
	cs->cpu = cpu;
	return vtice_ioctl(fd, VTICE_IOC_CPU_STATS, cs);
}

int vtice_emit_test(int fd, uint32_t cpu, uint32_t count, uint64_t value,
		    struct vtice_emit_test *out)
{
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->version = VTICE_ABI_VERSION;
	out->cpu = cpu;
	out->count = count;
	out->value = value;
	return vtice_ioctl(fd, VTICE_IOC_EMIT_TEST, out);
}

int64_t total_exits(void)
{
	struct vtice_status st;
	int fd = open_vtice(), err;

	if (fd < 0)
		return -1;
	err = vtice_status(fd, &st);
	close(fd);
	return err ? -1 : (int64_t)st.total_exits;
}

int64_t cpu_exits(int fd, int cpu)
{
	struct vtice_cpu_stats cs;

	return vtice_cpu_stats(fd, (uint32_t)cpu, &cs) ? -1 : (int64_t)cs.exits_total;
}

static void cpuid_exits(int n)
{
	for (int i = 0; i < n; i++) {
		unsigned int a = 0, b, c = 0, d;

		__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	}
}

/* The largest per-reason counts of one CPU, as "reason:count" pairs. */
static void top_reasons(const struct vtice_cpu_stats *cs, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int r = 0; r < VTICE_EXIT_REASON_SLOTS && used + 24 < len; r++)
		if (cs->exits[r])
			used += snprintf(buf + used, len - used, "%s%d:%llu", used ? "," : "", r,
					 (unsigned long long)cs->exits[r]);
}

/* Each online CPU must be virtualized, and CPUID (which always exits, SDM
 * Vol. 3C §25.1.2) executed there must show up in that CPU's counts. */
static int check_cpu(int fd, const char *name, const struct vtice_status *st, int cpu)
{
	enum { kCpuids = 100 };
	struct vtice_cpu_stats before, after;
	char reasons[256];
	int err;

	if (!(st->virtualized[cpu / 64] & (1ull << (cpu % 64))))
		return report(name, FAIL, "cpu %d not in the virtualized mask", cpu);
	if (pin_to_cpu(cpu))
		return report(name, FAIL, "cannot run on cpu %d", cpu);
	err = vtice_cpu_stats(fd, cpu, &before);
	cpuid_exits(kCpuids);
	if (!err)
		err = vtice_cpu_stats(fd, cpu, &after);
	if (err == -ENOTTY)
		return report(name, SKIP, "module does not implement VTICE_IOC_CPU_STATS");
	if (err)
		return report(name, FAIL, "CPU_STATS cpu %d: %s", cpu, strerror(-err));
	if (!(after.flags & VTICE_CPU_VIRTUALIZED))
		return report(name, FAIL, "cpu %d stats say not virtualized", cpu);
	if (after.exits[EXIT_REASON_CPUID] - before.exits[EXIT_REASON_CPUID] < kCpuids)
		return report(name, FAIL, "cpu %d: %d CPUIDs counted %llu CPUID exits", cpu, kCpuids,
			      (unsigned long long)(after.exits[EXIT_REASON_CPUID] -
						   before.exits[EXIT_REASON_CPUID]));
	top_reasons(&after, reasons, sizeof(reasons));
	printf("VTICE-STATUS cpu=%d virtualized=1 exits=%llu reasons=%s\n", cpu,
	       (unsigned long long)after.exits_total, reasons);
	return PASS;
}

int cmd_status(int argc, char **argv)
{
	const char *name = argv[0];
	struct vtice_status st;
	int cpus = online_cpus(), fd, err, rc = PASS;

	(void)argc;
	fd = open_vtice();
	if (fd < 0)
		return report(name, FAIL, "open %s: %s", VTICE_DEV, strerror(-fd));
	err = vtice_status(fd, &st);
	if (err) {
		close(fd);
		return report(name, err == -ENOTTY ? SKIP : FAIL, "STATUS ioctl: %s", strerror(-err));
	}
	if (st.nr_virtualized != (uint32_t)cpus)
		rc = report(name, FAIL, "%u of %d cpus virtualized", st.nr_virtualized, cpus);
	for (int cpu = 0; cpu < cpus && rc == PASS; cpu++)
		rc = check_cpu(fd, name, &st, cpu);
	if (rc == PASS && (err = vtice_status(fd, &st)))
		rc = report(name, FAIL, "STATUS ioctl again: %s", strerror(-err));
	close(fd);
	if (rc != PASS)
		return rc;
	return report(name, PASS, "virtualized=%u/%d total_exits=%llu cpuid_exits_counted=yes",
		      st.nr_virtualized, cpus, (unsigned long long)st.total_exits);
}

/* Opens the device as an unprivileged user in a child: must be EACCES. */
static int open_as_nobody(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(100);
		int fd = open(VTICE_DEV, O_RDONLY);

		_exit(fd >= 0 ? 0 : errno == EACCES ? 1 : 2);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

int cmd_devnode(int argc, char **argv)
{
	const char *name = argv[0];
	struct stat sb;
	int rc;

	(void)argc;
	if (stat(VTICE_DEV, &sb))
		return report(name, FAIL, "stat %s: %s", VTICE_DEV, strerror(errno));
	if (!S_ISCHR(sb.st_mode) || (sb.st_mode & 07777) != 0600 || sb.st_uid || sb.st_gid)
		return report(name, FAIL, "%s mode %o uid %u gid %u, expected char 0600 root",
			      VTICE_DEV, sb.st_mode & 07777, sb.st_uid, sb.st_gid);
	rc = open_as_nobody();
	if (rc != 1)
		return report(name, FAIL, "open as uid 65534: %s",
			      rc == 0 ? "succeeded" : "failed other than EACCES");
	return report(name, PASS, "char 0600 root:root; uid 65534 gets EACCES");
}
