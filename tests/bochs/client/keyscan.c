// SPDX-License-Identifier: GPL-2.0
/*
 * Whether the kernel can find the VMCALL key anywhere in RAM (scenario
 * hvstealth): every RAM segment of /proc/kcore (the direct map: PT_LOAD
 * entries with a physical address, below the kernel image) read and
 * searched at every byte offset.
 *
 * The key itself never comes into the guest: the host reads it through
 * the stub ("monitor key") and hands over only its first byte and a hash
 * of its 8 bytes (splitmix64's finalizer), so the scanner's own memory
 * holds no copy for the scan to find.
 *
 * keyscan NAME HASH FIRST_BYTE present|absent: "present" passes when the
 * key is found at least once (an ordinary load: the kernel sees a copy
 * of struct vt_hv), "absent" when it is found nowhere.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

#define CHUNK		(1u << 20)
#define KEY_LEN		8
#define MAX_HITS	8
#define KERNEL_IMAGE	0xffffffff80000000ull	/* kcore's text and module segments start here */

struct scan {
	uint64_t hash;
	uint8_t first, *buf;	/* buf: CHUNK bytes */
	uint64_t scanned, found, hits[MAX_HITS];	/* hits: physical addresses */
};

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Every offset in buf[0, len - KEY_LEN] whose 8 bytes hash to the key's. */
static void scan_chunk(struct scan *s, const uint8_t *buf, size_t len, uint64_t paddr)
{
	const uint8_t *p = buf, *end = buf + len - (KEY_LEN - 1);
	uint64_t v;

	while (p < end && (p = memchr(p, s->first, end - p))) {
		memcpy(&v, p, sizeof(v));
		if (mix64(v) == s->hash) {
			if (s->found < MAX_HITS)
				s->hits[s->found] = paddr + (p - buf);
			s->found++;
		}
		p++;
	}
}

/* One RAM segment, in chunks that overlap by KEY_LEN - 1 bytes. */
static int scan_segment(struct scan *s, int fd, const Elf64_Phdr *ph)
{
	uint8_t *buf = s->buf;
	uint64_t done = 0;

	while (done < ph->p_memsz) {
		size_t want = ph->p_memsz - done > CHUNK ? CHUNK : ph->p_memsz - done;
		ssize_t got = pread(fd, buf, want, (off_t)(ph->p_offset + done));

		if (got != (ssize_t)want)
			return -1;
		scan_chunk(s, buf, want, ph->p_paddr + done);
		s->scanned += done ? want - (KEY_LEN - 1) : want;	/* the overlap once */
		if (want < KEY_LEN || done + want == ph->p_memsz)
			break;
		done += want - (KEY_LEN - 1);
	}
	return 0;
}

/* A RAM segment: a physical address (the others carry -1), in the direct map. */
static int scan_if_ram(int fd, const Elf64_Phdr *ph, void *ctx)
{
	struct scan *s = ctx;

	if (ph->p_paddr == (Elf64_Addr)-1 || ph->p_vaddr >= KERNEL_IMAGE)
		return 0;
	return scan_segment(s, fd, ph);
}

static int scan_ram(struct scan *s)
{
	int fd = open("/proc/kcore", O_RDONLY), ret = -1;

	s->buf = malloc(CHUNK);
	if (fd >= 0 && s->buf)
		ret = kcore_each_segment(fd, scan_if_ram, s);
	free(s->buf);
	if (fd >= 0)
		close(fd);
	return ret;
}

int cmd_keyscan(int argc, char **argv)
{
	const char *name = argc ? argv[0] : "keyscan";
	struct scan s = { 0 };
	char where[MAX_HITS * 20] = "";
	unsigned first;
	bool want_present;

	if (argc != 4 || sscanf(argv[1], "%" SCNx64, &s.hash) != 1 || sscanf(argv[2], "%x", &first) != 1 ||
	    first > 0xff || (strcmp(argv[3], "present") && strcmp(argv[3], "absent")))
		return report(name, FAIL, "usage: keyscan NAME HASH FIRST_BYTE present|absent (hex)");
	s.first = (uint8_t)first;
	want_present = !strcmp(argv[3], "present");
	if (scan_ram(&s) || !s.scanned)
		return report(name, FAIL, "cannot read the RAM segments of /proc/kcore");
	for (uint64_t i = 0; i < s.found && i < MAX_HITS; i++)
		sprintf(where + strlen(where), " 0x%" PRIx64, s.hits[i]);
	figure_named(name, "scanned-bytes", "%" PRIu64, s.scanned);
	figure_named(name, "found", "%" PRIu64, s.found);
	if (want_present ? s.found > 0 : s.found == 0)
		return report(name, PASS, "the VMCALL key %s in %" PRIu64 " bytes of RAM (/proc/kcore)%s%s",
			      s.found ? "found" : "nowhere", s.scanned, s.found ? ", at" : "", where);
	return report(name, FAIL, "the VMCALL key found %" PRIu64 " times in %" PRIu64 " bytes of RAM (want %s)%s%s",
		      s.found, s.scanned, argv[3], s.found ? ", at" : "", where);
}
