// SPDX-License-Identifier: GPL-2.0
/*
 * Ring check: records the hypervisor writes on request (VMCALL from the
 * module, VTICE_IOC_EMIT_TEST) must reach the mmap'd ring of that CPU in
 * order, and a full ring must drop and count, never overwrite (ring.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vtice/records.h>
#include <vtice/ring.h>

#include "device.h"
#include "report.h"

struct ring {
	volatile struct vtice_ring_header *hdr;
	const volatile struct vtice_record *recs;
	void *map;
	size_t len;
};

static int map_ring(int fd, const struct vtice_status *st, int cpu, struct ring *r)
{
	r->len = st->ring_mmap_size;
	r->map = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      (off_t)cpu * st->ring_mmap_size);
	if (r->map == MAP_FAILED)
		return -errno;
	r->hdr = r->map;
	r->recs = (const void *)((char *)r->map + r->hdr->data_offset);
	return 0;
}

static const char *bad_header(const struct ring *r, const struct vtice_status *st, int cpu)
{
	if (r->hdr->version != VTICE_RING_VERSION || r->hdr->size < sizeof(*r->hdr))
		return "header version/size";
	if (r->hdr->cpu != (uint32_t)cpu)
		return "header cpu";
	if (r->hdr->nr_records != st->ring_records)
		return "header nr_records differs from status";
	if (r->hdr->data_offset + (uint64_t)r->hdr->nr_records * sizeof(struct vtice_record) > r->len)
		return "records run past the mapping";
	return NULL;
}

static void drain(struct ring *r)
{
	__atomic_store_n(&r->hdr->tail, __atomic_load_n(&r->hdr->head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

/* Consumes every published record, checking it is the next test record of
 * the expected stream. Returns the count consumed, or -1 with *why set. */
static long consume_test_records(struct ring *r, int cpu, uint64_t value, uint64_t *next_seq,
				 const char **why)
{
	uint64_t head = __atomic_load_n(&r->hdr->head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->hdr->tail, mask = r->hdr->nr_records - 1;
	long n = 0;

	for (; tail != head; tail++, n++) {
		const volatile struct vtice_record *rec = &r->recs[tail & mask];

		if (rec->type != VTICE_REC_TEST || rec->cpu != cpu || rec->u.test.value != value) {
			*why = "unexpected record type/cpu/value";
			return -1;
		}
		if (rec->u.test.sequence != (*next_seq)++) {
			*why = "sequence out of order";
			return -1;
		}
	}
	__atomic_store_n(&r->hdr->tail, tail, __ATOMIC_RELEASE);
	return n;
}

static int check_order(const char *name, int fd, struct ring *r, int cpu)
{
	const char *why = NULL;
	uint32_t count = r->hdr->nr_records / 2 < 1000 ? r->hdr->nr_records / 2 : 1000;
	struct vtice_emit_test em;
	uint64_t seq = 0, value = 0x5eed0000ull + (uint64_t)cpu;
	long got;
	int err;

	drain(r);
	err = vtice_emit_test(fd, cpu, count, value, &em);
	if (err == -ENOTTY)
		return report(name, SKIP, "module does not implement VTICE_IOC_EMIT_TEST");
	if (err)
		return report(name, FAIL, "EMIT_TEST cpu %d: %s", cpu, strerror(-err));
	got = consume_test_records(r, cpu, value, &seq, &why);
	if (got < 0)
		return report(name, FAIL, "cpu %d: %s at record %llu", cpu, why,
			      (unsigned long long)seq);
	if (got != count || em.written != count || em.dropped)
		return report(name, FAIL, "cpu %d: emitted %u, written=%llu dropped=%llu, read %ld",
			      cpu, count, (unsigned long long)em.written,
			      (unsigned long long)em.dropped, got);
	return PASS;
}

/* Fills the ring without consuming, then checks lost, the LOST marker
 * record and that the stored prefix is intact and in order. */
static int check_overflow(const char *name, int fd, struct ring *r, int cpu)
{
	const char *why = NULL;
	uint32_t cap = r->hdr->nr_records, extra = 100;
	uint64_t lost0, lost, seq = 0, value = 0x0f100000ull, mask = cap - 1;
	struct vtice_emit_test em;
	long got;
	int err;

	drain(r);
	lost0 = r->hdr->lost;
	err = vtice_emit_test(fd, cpu, cap + extra, value, &em);
	if (err)
		return report(name, FAIL, "EMIT_TEST %u records: %s", cap + extra, strerror(-err));
	lost = r->hdr->lost - lost0;
	if (em.dropped == 0 || lost != em.dropped || em.written + em.dropped != cap + extra)
		return report(name, FAIL, "emitted %u into %u slots: written=%llu dropped=%llu lost+=%llu",
			      cap + extra, cap, (unsigned long long)em.written,
			      (unsigned long long)em.dropped, (unsigned long long)lost);
	got = consume_test_records(r, cpu, value, &seq, &why);
	if (got < 0 || (uint64_t)got != em.written)
		return report(name, FAIL, "stored prefix: %s (read %ld of %llu)", why ? why : "short",
			      got, (unsigned long long)em.written);
	err = vtice_emit_test(fd, cpu, 1, value, &em);
	if (err || r->hdr->head - r->hdr->tail < 1)
		return report(name, FAIL, "emit after drain: %s", err ? strerror(-err) : "nothing stored");
	const volatile struct vtice_record *first = &r->recs[r->hdr->tail & mask];
	if (first->type != VTICE_REC_LOST || first->u.lost.count != lost)
		return report(name, FAIL, "after the gap: record type %u count %llu, expected LOST %llu",
			      first->type, (unsigned long long)first->u.lost.count,
			      (unsigned long long)lost);
	drain(r);
	figure_named(name, "capacity", "%u", cap);
	return report(name, PASS, "capacity=%u written=%llu dropped=%llu lost=%llu LOST record ok", cap,
		      (unsigned long long)(cap + extra - lost), (unsigned long long)lost,
		      (unsigned long long)lost);
}

/* Reports <NAME>.order and <NAME>.overflow. */
int cmd_ring(int argc, char **argv)
{
	char order[96], overflow[96];
	struct vtice_status st;
	struct ring r;
	int fd, err, cpus = online_cpus(), rc = PASS;

	(void)argc;
	snprintf(order, sizeof(order), "%s.order", argv[0]);
	snprintf(overflow, sizeof(overflow), "%s.overflow", argv[0]);
	fd = open_vtice();
	if (fd < 0) {
		report(order, FAIL, "open: %s", strerror(-fd));
		return report(overflow, FAIL, "open: %s", strerror(-fd));
	}
	err = vtice_status(fd, &st);
	if (!err && !st.ring_mmap_size)
		err = -ENOSYS;
	for (int cpu = 0; cpu < cpus && !err && rc == PASS; cpu++) {
		const char *bad;

		err = map_ring(fd, &st, cpu, &r);
		if (err)
			break;
		bad = bad_header(&r, &st, cpu);
		rc = bad ? report(order, FAIL, "cpu %d: %s", cpu, bad)
			 : check_order(order, fd, &r, cpu);
		munmap(r.map, r.len);
	}
	if (err) {
		enum outcome o = err == -ENOTTY || err == -ENOSYS || err == -ENODEV ? SKIP : FAIL;

		report(order, o, "status/mmap: %s", strerror(-err));
		close(fd);
		return report(overflow, o, "status/mmap: %s", strerror(-err));
	}
	if (rc == PASS)
		report(order, PASS, "%d cpus: EMIT_TEST records in sequence", cpus);
	else if (rc == SKIP) {
		close(fd);
		return report(overflow, SKIP, "EMIT_TEST not implemented");
	}
	err = map_ring(fd, &st, 0, &r);
	rc = err ? report(overflow, FAIL, "mmap cpu 0: %s", strerror(-err))
		 : check_overflow(overflow, fd, &r, 0);
	if (!err)
		munmap(r.map, r.len);
	close(fd);
	return rc;
}
