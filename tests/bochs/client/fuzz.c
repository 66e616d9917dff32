// SPDX-License-Identifier: GPL-2.0
/*
 * A small ioctl/mmap fuzzer for /dev/vtice, run as root (the worst caller
 * the device admits). Random command numbers, random argument bytes, bad
 * pointers (NULL, unmapped, kernel, non-canonical, a struct straddling an
 * unmapped page) and random mmap geometry. It checks the answers the ABI
 * promises (include/uapi/vtice/ioctl.h): unknown command -> ENOTTY, a known
 * command with a bad pointer -> EFAULT, random contents -> 0 or EINVAL. The
 * host checks that the kernel logged no oops meanwhile.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "device.h"
#include "report.h"

static const unsigned long known_cmds[] = {
	VTICE_IOC_STATUS, VTICE_IOC_CPU_STATS, VTICE_IOC_CAPS, VTICE_IOC_EMIT_TEST,
};
#define NR_KNOWN (sizeof(known_cmds) / sizeof(known_cmds[0]))

struct fuzz {
	uint64_t rng;
	char *page;		/* a writable page followed by an unmapped one */
	long violations;
	char first[160];
	long by_class[4];	/* unknown cmd, bad pointer, random contents, mmap */
};

static uint64_t next(struct fuzz *f)
{
	/* xorshift64*: reproducible from the seed on the command line. */
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 0x2545f4914f6cdd1dull;
}

static void violation(struct fuzz *f, const char *what, unsigned long cmd, int err)
{
	if (!f->violations++)
		snprintf(f->first, sizeof(f->first), "%s: cmd %#lx -> %s", what, cmd,
			 err ? strerror(err) : "success");
}

static int is_known(unsigned long cmd)
{
	for (size_t i = 0; i < NR_KNOWN; i++)
		if (known_cmds[i] == cmd)
			return 1;
	return 0;
}

static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

static void fuzz_unknown_cmd(struct fuzz *f, int fd)
{
	unsigned long cmd;
	int err;

	if (next(f) & 1)
		cmd = (uint32_t)next(f);
	else
		cmd = _IOC(next(f) & 3, VTICE_IOC_MAGIC, next(f) & 0xff, next(f) & 0x3fff);
	if (is_known(cmd))
		return;
	err = do_ioctl(fd, cmd, f->page + (next(f) & 0xff8));
	/* Only our magic is promised ENOTTY; others may be taken by the VFS. */
	if (_IOC_TYPE(cmd) == VTICE_IOC_MAGIC && err != ENOTTY)
		violation(f, "unknown vtice command not ENOTTY", cmd, err);
	f->by_class[0]++;
}

static void *bad_pointer(struct fuzz *f)
{
	switch (next(f) % 5) {
	case 0: return NULL;
	case 1: return (void *)0x1000;
	case 2: return (void *)(0xffffffff81000000ull + (next(f) & 0xfffff0));
	case 3: return (void *)0x8000000000000000ull;
	default: return f->page + 4096 + (next(f) & 0xff0);	/* the unmapped page */
	}
}

static void fuzz_bad_pointer(struct fuzz *f, int fd)
{
	unsigned long cmd = known_cmds[next(f) % NR_KNOWN];
	int err = do_ioctl(fd, cmd, bad_pointer(f));

	if (err != EFAULT)
		violation(f, "bad pointer not EFAULT", cmd, err);
	f->by_class[1]++;
}

/* Random bytes with a plausible header most of the time, sometimes a struct
 * that ends in the unmapped page. */
static void fuzz_contents(struct fuzz *f, int fd)
{
	unsigned long cmd = known_cmds[next(f) % NR_KNOWN];
	size_t len = _IOC_SIZE(cmd), off = 4096 - len;
	int straddle = (next(f) & 7) == 0, err;
	uint32_t *hdr;

	/* Straddling: size and version mapped, at least the last byte not. */
	if (straddle)
		off = 4096 - 8 - (next(f) % (len - 8));
	for (size_t i = 0; i + off < 4096; i++)
		f->page[off + i] = (char)next(f);
	hdr = (uint32_t *)(f->page + off);
	if (next(f) & 1) {
		hdr[0] = (next(f) & 3) ? len : (uint32_t)(next(f) % (2 * len));
		hdr[1] = (next(f) & 3) ? VTICE_ABI_VERSION : (uint32_t)next(f);
		if (cmd == VTICE_IOC_EMIT_TEST && !straddle)
			((struct vtice_emit_test *)hdr)->count = next(f) % 2048;
	}
	err = do_ioctl(fd, cmd, hdr);
	if (straddle ? (err != EFAULT && err != EINVAL) : (err && err != EINVAL))
		violation(f, straddle ? "straddling struct" : "random contents", cmd, err);
	f->by_class[2]++;
}

static sigjmp_buf touch_fault;

static void on_fault(int sig)
{
	siglongjmp(touch_fault, sig);
}

/* A mapping the driver grants must be backed: touching it may not fault. */
static void touch(struct fuzz *f, volatile char *p, size_t len)
{
	struct sigaction sa = { .sa_handler = on_fault }, old_segv, old_bus;

	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	if (sigsetjmp(touch_fault, 1) == 0) {
		for (size_t i = 0; i < len; i += 4096)
			(void)p[i];
	} else {
		violation(f, "granted mmap faults when read", 0, 0);
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
}

static void fuzz_mmap(struct fuzz *f, int fd)
{
	size_t len = (next(f) % 64) * 4096 + ((next(f) & 7) ? 0 : next(f) % 4096);
	off_t off = (off_t)((next(f) & 1) ? (next(f) % 64) * 4096 : next(f) & 0x7fffffffffff000ull);
	int prot = (next(f) & 1) ? PROT_READ : PROT_READ | PROT_WRITE | ((next(f) & 3) ? 0 : PROT_EXEC);
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);

	if (p != MAP_FAILED) {
		touch(f, p, len);
		munmap(p, len);
	}
	f->by_class[3]++;
}

int cmd_fuzz(int argc, char **argv)
{
	const char *name = argv[0];
	long n = argc > 1 ? atol(argv[1]) : 100000;
	struct fuzz f = { .rng = argc > 2 ? strtoull(argv[2], NULL, 0) | 1 : 1 };
	struct vtice_status st;
	int fd = open_vtice(), err;

	if (fd < 0)
		return report(name, FAIL, "open %s: %s", VTICE_DEV, strerror(-fd));
	f.page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f.page == MAP_FAILED || munmap(f.page + 4096, 4096))
		return report(name, FAIL, "cannot set up the guard page");
	for (long i = 0; i < n; i++) {
		switch (next(&f) % 8) {
		case 0: case 1: case 2: fuzz_unknown_cmd(&f, fd); break;
		case 3: case 4: fuzz_bad_pointer(&f, fd); break;
		case 5: case 6: fuzz_contents(&f, fd); break;
		default: fuzz_mmap(&f, fd); break;
		}
	}
	err = vtice_status(fd, &st);
	close(fd);
	if (err)
		return report(name, FAIL, "STATUS after fuzzing: %s", strerror(-err));
	if (f.violations)
		return report(name, FAIL, "%ld calls, %ld answers break the ABI; first: %s", n,
			      f.violations, f.first);
	return report(name, PASS, "calls=%ld unknown=%ld badptr=%ld contents=%ld mmap=%ld; STATUS ok",
		      n, f.by_class[0], f.by_class[1], f.by_class[2], f.by_class[3]);
}
