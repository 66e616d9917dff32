// SPDX-License-Identifier: GPL-2.0
/*
 * Whether a loaded module's code can be found in kernel memory, with the
 * kernel's own files alone (scenario hvstealth): the allocations in the
 * module area of /proc/vmallocinfo that appeared since a snapshot (the
 * module's, when it was the only load in between), read through
 * /proc/kcore and searched for 32-byte runs of the .ko file's .text that
 * no relocation touches.
 *
 * modallocs FILE: the snapshot.
 * modtext NAME KO FILE present|absent: of up to 256 runs spread over the
 *   text, "present" passes when at least half are found (an ordinary
 *   load: the kernel patches some bytes at load, alternatives and return
 *   sites), "absent" when none is.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define RUN		32
#define MAX_RUNS	256
#define MAX_REGIONS	64
#define MODULE_AREA	0xffffffff80000000ull	/* the kernel image and the modules above it */

struct region {
	uint64_t start, end;
};

/*
 * kernel.kptr_restrict as it is, after setting it to v: /proc/vmallocinfo
 * prints %pK, hashed at 0 and real for root at 1.
 */
static int set_kptr_restrict(int v)
{
	FILE *f = fopen("/proc/sys/kernel/kptr_restrict", "r+");
	int was = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &was) == 1 && v >= 0) {
		rewind(f);
		fprintf(f, "%d\n", v);
	}
	fclose(f);
	return was;
}

/* The module area's allocations listed in /proc/vmallocinfo. */
static int module_allocations(struct region *r, int max)
{
	int was = set_kptr_restrict(1);
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char line[512];
	int n = 0;

	if (!f) {
		set_kptr_restrict(was);
		return -1;
	}
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long long s, e;

		if (sscanf(line, "0x%llx-0x%llx", &s, &e) == 2 && s >= MODULE_AREA && strstr(line, "vmalloc"))
			r[n++] = (struct region){ s, e };
	}
	fclose(f);
	set_kptr_restrict(was);
	return n;
}

int cmd_modallocs(int argc, char **argv)
{
	struct region r[MAX_REGIONS];
	int n = module_allocations(r, MAX_REGIONS);
	FILE *out = argc == 1 ? fopen(argv[0], "w") : NULL;

	if (n < 0 || !out) {
		fprintf(stderr, "modallocs: usage: modallocs FILE (and /proc/vmallocinfo readable)\n");
		return FAIL;
	}
	for (int i = 0; i < n; i++)
		fprintf(out, "%" PRIx64 "-%" PRIx64 "\n", r[i].start, r[i].end);
	fclose(out);
	return PASS;
}

/* The regions modallocs saved in file, or -1 when it cannot be read. */
static int read_snapshot(const char *file, struct region *r, int max)
{
	FILE *f = fopen(file, "r");
	unsigned long long s, e;
	int n = 0;

	if (!f)
		return -1;
	while (n < max && fscanf(f, "%llx-%llx", &s, &e) == 2)
		r[n++] = (struct region){ s, e };
	fclose(f);
	return n;
}

static bool in_snapshot(const struct region *snap, int n, const struct region *r)
{
	for (int i = 0; i < n; i++)
		if (snap[i].start == r->start && snap[i].end == r->end)
			return true;
	return false;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc(n);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	*len = n;
out:
	if (f)
		fclose(f);
	return buf;
}

/* The .ko's .text, and which of its bytes a relocation in .rela.text writes. */
struct ko_text {
	const uint8_t *bytes;
	size_t len;
	uint8_t *relocated;
};

static const Elf64_Shdr *section(const uint8_t *ko, size_t len, const char *name, unsigned *index)
{
	const Elf64_Ehdr *eh = (const void *)ko;
	const Elf64_Shdr *sh = (const void *)(ko + eh->e_shoff);
	const char *names;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_shstrndx >= eh->e_shnum ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > len)
		return NULL;
	names = (const char *)ko + sh[eh->e_shstrndx].sh_offset;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_offset + sh[i].sh_size > len && sh[i].sh_type != SHT_NOBITS)
			return NULL;
		if (!strcmp(names + sh[i].sh_name, name)) {
			if (index)
				*index = i;
			return &sh[i];
		}
	}
	return NULL;
}

static int ko_text(const uint8_t *ko, size_t len, struct ko_text *t)
{
	const Elf64_Shdr *text = section(ko, len, ".text", NULL);
	const Elf64_Shdr *rela = section(ko, len, ".rela.text", NULL);

	if (!text || !rela || text->sh_type != SHT_PROGBITS)
		return -1;
	t->bytes = ko + text->sh_offset;
	t->len = text->sh_size;
	t->relocated = calloc(t->len + 8, 1);
	if (!t->relocated)
		return -1;
	for (size_t i = 0; i < rela->sh_size / sizeof(Elf64_Rela); i++) {
		const Elf64_Rela *r = (const Elf64_Rela *)(ko + rela->sh_offset) + i;

		if (r->r_offset < t->len)
			memset(t->relocated + r->r_offset, 1, 8);	/* at most 8 bytes a relocation */
	}
	return 0;
}

/* A run worth looking for: no relocated byte, and not padding (few distinct bytes). */
static bool searchable(const struct ko_text *t, size_t off)
{
	bool seen[256] = { false };
	int distinct = 0;

	for (size_t i = off; i < off + RUN; i++) {
		if (t->relocated[i])
			return false;
		distinct += !seen[t->bytes[i]];
		seen[t->bytes[i]] = true;
	}
	return distinct >= 12;
}

static int pick_runs(const struct ko_text *t, size_t *runs)
{
	size_t candidates = 0, step, n = 0;

	for (size_t off = 0; off + RUN <= t->len; off += RUN)
		candidates += searchable(t, off);
	step = candidates > MAX_RUNS ? candidates / MAX_RUNS : 1;
	candidates = 0;
	for (size_t off = 0; off + RUN <= t->len && n < MAX_RUNS; off += RUN)
		if (searchable(t, off) && candidates++ % step == 0)
			runs[n++] = off;
	return (int)n;
}

int cmd_modtext(int argc, char **argv)
{
	const char *name = argc ? argv[0] : "modtext";
	struct region r[MAX_REGIONS], snap[MAX_REGIONS];
	struct ko_text t = { 0 };
	size_t ko_len = 0, runs[MAX_RUNS], searched = 0, found = 0;
	bool hit[MAX_RUNS] = { false };
	uint8_t *ko, *mem;
	bool want_present;
	int nruns, nr, nsnap;

	if (argc != 4 || (strcmp(argv[3], "present") && strcmp(argv[3], "absent")))
		return report(name, FAIL, "usage: modtext NAME KO SNAPSHOT present|absent");
	want_present = !strcmp(argv[3], "present");
	ko = read_file(argv[1], &ko_len);
	if (!ko || ko_text(ko, ko_len, &t))
		return report(name, FAIL, "%s: no .text with .rela.text in it", argv[1]);
	nruns = pick_runs(&t, runs);
	nr = module_allocations(r, MAX_REGIONS);
	if (nr < 0)
		return report(name, FAIL, "cannot read /proc/vmallocinfo");
	nsnap = read_snapshot(argv[2], snap, MAX_REGIONS);
	if (nsnap < 0)
		return report(name, FAIL, "cannot read the snapshot %s (modallocs)", argv[2]);
	for (int i = 0; i < nr; i++) {
		size_t size = r[i].end - r[i].start;

		if (in_snapshot(snap, nsnap, &r[i]) || !(mem = malloc(size)))
			continue;
		if (kcore_read(r[i].start, mem, size)) {
			free(mem);
			return report(name, FAIL, "cannot read 0x%" PRIx64 "+%zu through /proc/kcore", r[i].start, size);
		}
		searched += size;
		for (int k = 0; k < nruns; k++)
			if (!hit[k] && memmem(mem, size, t.bytes + runs[k], RUN)) {
				hit[k] = true;
				found++;
			}
		free(mem);
	}
	figure_named(name, "searched-bytes", "%zu", searched);
	figure_named(name, "runs-found", "%zu/%d", found, nruns);
	if (!searched || nruns < 16)
		return report(name, FAIL, "nothing to judge: %zu new bytes in the module area, %d runs in %s",
			      searched, nruns, argv[1]);
	if (want_present ? found * 2 >= (size_t)nruns : found == 0)
		return report(name, PASS, "%zu of %d runs of %s's code in the %zu bytes the load added to the module area",
			      found, nruns, argv[1], searched);
	return report(name, FAIL, "%zu of %d runs of %s's code in the %zu bytes the load added (want %s)", found,
		      nruns, argv[1], searched, argv[3]);
}
