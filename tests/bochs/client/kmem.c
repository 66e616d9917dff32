// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's own view of kernel memory, the oracle for the hypervisor
 * stub's scenarios: a symbol's address from /proc/kallsyms and its bytes
 * through /proc/kcore (an ELF core file whose PT_LOAD segments map kernel
 * virtual addresses). Independent of vtice: only the kernel's own files.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

#define KMEM_MAX	256

int ksym_lookup(const char *name, uint64_t *addr)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long long a;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name)) {
			fclose(f);
			*addr = a;
			return a ? 0 : -1;	/* 0: kptr_restrict hides addresses */
		}
	}
	fclose(f);
	return -1;
}

int kcore_each_segment(int fd, int (*each)(int fd, const Elf64_Phdr *ph, void *ctx), void *ctx)
{
	Elf64_Ehdr eh;
	int ret = 0;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return -1;
	for (unsigned i = 0; i < eh.e_phnum && !ret; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * eh.e_phentsize) != sizeof(ph))
			return -1;
		if (ph.p_type == PT_LOAD)
			ret = each(fd, &ph, ctx);
	}
	return ret;
}

struct kcore_request {
	uint64_t addr;
	uint8_t *buf;
	size_t len;
};

/* The segment that holds the whole request: 1 once read, -1 if that failed. */
static int read_if_inside(int fd, const Elf64_Phdr *ph, void *ctx)
{
	const struct kcore_request *r = ctx;

	if (r->addr < ph->p_vaddr || r->addr + r->len > ph->p_vaddr + ph->p_memsz)
		return 0;
	return pread(fd, r->buf, r->len, (off_t)(ph->p_offset + (r->addr - ph->p_vaddr))) == (ssize_t)r->len ? 1 : -1;
}

int kcore_read(uint64_t addr, uint8_t *buf, size_t len)
{
	struct kcore_request r = { addr, buf, len };
	int fd = open("/proc/kcore", O_RDONLY), ret;

	if (fd < 0)
		return -1;
	ret = kcore_each_segment(fd, read_if_inside, &r);
	close(fd);
	return ret == 1 ? 0 : -1;
}

static void to_hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/*
 * kcore NAME SYMBOL LEN [EXPECT_HEX]: prints NAME.addr and NAME.bytes as
 * figures; with EXPECT_HEX, passes only if the bytes equal it.
 */
int cmd_kcore(int argc, char **argv)
{
	uint8_t buf[KMEM_MAX];
	char hex[2 * KMEM_MAX + 1];
	uint64_t addr;
	size_t len;

	if (argc < 3)
		return report(argc ? argv[0] : "kcore", FAIL, "usage: kcore NAME SYMBOL LEN [HEX]");
	len = strtoul(argv[2], NULL, 0);
	if (len == 0 || len > KMEM_MAX)
		return report(argv[0], FAIL, "LEN must be 1..%d", KMEM_MAX);
	if (ksym_lookup(argv[1], &addr))
		return report(argv[0], FAIL, "%s not in /proc/kallsyms", argv[1]);
	if (kcore_read(addr, buf, len))
		return report(argv[0], FAIL, "cannot read %s at 0x%" PRIx64 " via /proc/kcore",
			      argv[1], addr);
	to_hex(buf, len, hex);
	figure_named(argv[0], "addr", "0x%" PRIx64, addr);
	figure_named(argv[0], "bytes", "%s", hex);
	if (argc < 4)
		return report(argv[0], PASS, "%s at 0x%" PRIx64 ": %s", argv[1], addr, hex);
	if (strcmp(hex, argv[3]))
		return report(argv[0], FAIL, "%s reads %s, expected %s", argv[1], hex, argv[3]);
	return report(argv[0], PASS, "%s reads %s as expected", argv[1], hex);
}

static int hostname_is(const char *want)
{
	char name[128] = "";

	return gethostname(name, sizeof(name)) == 0 && !strcmp(name, want);
}

/*
 * kwatch NAME SYMBOL LEN DONE_HOSTNAME MAX_SECONDS: reads SYMBOL's bytes
 * through /proc/kcore every 20 ms, from an fd opened up front (so the
 * reads themselves never open a file), until the hostname becomes
 * DONE_HOSTNAME (the host's debugger writes it into the kernel's
 * init_uts_ns when it is done) or MAX_SECONDS pass. Passes if every read
 * saw the bytes of the first one: a hidden breakpoint must never show.
 */
int cmd_kwatch(int argc, char **argv)
{
	uint8_t first[KMEM_MAX], now[KMEM_MAX];
	char hex[2 * KMEM_MAX + 1];
	unsigned long reads = 0, differing = 0;
	uint64_t addr, deadline;
	size_t len;

	if (argc < 5)
		return report(argc ? argv[0] : "kwatch", FAIL,
			      "usage: kwatch NAME SYMBOL LEN DONE_HOSTNAME MAX_SECONDS");
	len = strtoul(argv[2], NULL, 0);
	if (len == 0 || len > KMEM_MAX)
		return report(argv[0], FAIL, "LEN must be 1..%d", KMEM_MAX);
	if (ksym_lookup(argv[1], &addr) || kcore_read(addr, first, len))
		return report(argv[0], FAIL, "cannot read %s via /proc/kcore", argv[1]);
	deadline = now_ns() + strtoull(argv[4], NULL, 0) * 1000000000ull;
	while (!hostname_is(argv[3]) && now_ns() < deadline) {
		if (kcore_read(addr, now, len))
			return report(argv[0], FAIL, "read %lu of %s failed", reads, argv[1]);
		reads++;
		if (memcmp(now, first, len)) {
			if (!differing++) {
				to_hex(now, len, hex);
				printf("kwatch: %s changed to %s\n", argv[1], hex);
			}
		}
		usleep(20000);
	}
	figure_named(argv[0], "reads", "%lu", reads);
	if (!hostname_is(argv[3]))
		return report(argv[0], FAIL, "the host never said done (%lu reads)", reads);
	if (differing)
		return report(argv[0], FAIL, "%lu of %lu reads differed", differing, reads);
	return report(argv[0], PASS, "%lu reads of %s while the debugger worked, all original",
		      reads, argv[1]);
}
