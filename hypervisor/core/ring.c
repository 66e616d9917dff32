// SPDX-License-Identifier: GPL-2.0
/*
 * Single-producer ring writer. The producer runs in VMX root on the ring's
 * own CPU with interrupts off, so it needs no lock; it only has to order its
 * stores against the consumer on another CPU (release on head).
 */
#include "ring.h"

void vt_ring_init(struct vt_ring *ring, void *mem, u32 nr_records, u32 cpu)
{
	struct vtice_ring_header *hdr = mem;

	vt_memset(hdr, 0, VTICE_RING_HEADER_SIZE);
	hdr->size = sizeof(*hdr);
	hdr->version = VTICE_RING_VERSION;
	hdr->cpu = cpu;
	hdr->nr_records = nr_records;
	hdr->data_offset = VTICE_RING_HEADER_SIZE;
	vt_ring_attach(ring, mem);
}

void vt_ring_attach(struct vt_ring *ring, void *mem)
{
	ring->hdr = mem;
	ring->records = (struct vtice_record *)((u8 *)mem + VTICE_RING_HEADER_SIZE);
	ring->nr_records = ring->hdr->nr_records;
	ring->head = ring->hdr->head;
	ring->unreported_lost = 0;
}

/* Free slots, trusting the consumer's tail only as far as it is sane. */
static u64 vt_ring_space(const struct vt_ring *ring)
{
	u64 tail = VT_LOAD_ACQUIRE(ring->hdr->tail);
	u64 used = ring->head - tail;

	if (tail > ring->head || used > ring->nr_records)
		return 0;	/* a confused consumer: keep what it has not read */
	return ring->nr_records - used;
}

static void vt_ring_store(struct vt_ring *ring, const struct vtice_record *rec)
{
	ring->records[ring->head & (ring->nr_records - 1)] = *rec;
	ring->head++;
}

/* Slots n records need now: a LOST record goes before them when drops are owed. */
static u64 vt_ring_need(const struct vt_ring *ring, u32 n)
{
	return n + (ring->unreported_lost ? 1 : 0);
}

bool vt_ring_has_room(const struct vt_ring *ring, u32 n)
{
	return vt_ring_space(ring) >= vt_ring_need(ring, n) + VT_RING_RESERVE;
}

void vt_ring_lose(struct vt_ring *ring, u32 n)
{
	ring->unreported_lost += n;
	VT_STORE_RELEASE(ring->hdr->lost, ring->hdr->lost + n);
}

static bool vt_ring_store_group(struct vt_ring *ring, const struct vtice_record *recs, u32 n,
				u32 reserve)
{
	u32 i;

	if (vt_ring_space(ring) < vt_ring_need(ring, n) + reserve) {
		vt_ring_lose(ring, n);
		return false;
	}
	if (ring->unreported_lost) {
		struct vtice_record lost = {
			.type = VTICE_REC_LOST,
			.cpu = recs[0].cpu,
			.tsc = recs[0].tsc,
			.u.lost.count = ring->unreported_lost,
		};

		vt_ring_store(ring, &lost);
		ring->unreported_lost = 0;
	}
	for (i = 0; i < n; i++)
		vt_ring_store(ring, &recs[i]);
	/* The consumer sees the group whole or not at all. */
	VT_STORE_RELEASE(ring->hdr->head, ring->head);
	return true;
}

bool vt_ring_push_group(struct vt_ring *ring, const struct vtice_record *recs, u32 n)
{
	return vt_ring_store_group(ring, recs, n, VT_RING_RESERVE);
}

bool vt_ring_push(struct vt_ring *ring, const struct vtice_record *rec)
{
	return vt_ring_store_group(ring, rec, 1, VT_RING_RESERVE);
}

void vt_ring_count_wait(struct vt_ring *ring, bool room)
{
	VT_STORE_RELEASE(ring->hdr->waits, ring->hdr->waits + 1);
	if (!room)
		VT_STORE_RELEASE(ring->hdr->waits_run_out, ring->hdr->waits_run_out + 1);
}

bool vt_ring_push_final(struct vt_ring *ring, const struct vtice_record *rec)
{
	return vt_ring_store_group(ring, rec, 1, 0);
}

/* head - tail, or 0 when the shared tail is not one a sane consumer wrote. */
static u64 vt_ring_used(const struct vt_ring *ring, u64 tail)
{
	u64 used = ring->head - tail;

	return tail > ring->head || used > ring->nr_records ? 0 : used;
}

u64 vt_ring_unread(const struct vt_ring *ring)
{
	return vt_ring_used(ring, VT_LOAD_ACQUIRE(ring->hdr->tail));
}

const struct vtice_record *vt_ring_peek(const struct vt_ring *ring, u64 index)
{
	u64 tail = VT_LOAD_ACQUIRE(ring->hdr->tail);

	if (index >= vt_ring_used(ring, tail))
		return NULL;
	return &ring->records[(tail + index) & (ring->nr_records - 1)];
}

void vt_ring_consume(struct vt_ring *ring, u64 count)
{
	u64 tail = VT_LOAD_ACQUIRE(ring->hdr->tail), used = vt_ring_used(ring, tail);

	if (!used)
		tail = ring->head;	/* nothing unread, or a tail out of range */
	VT_STORE_RELEASE(ring->hdr->tail, tail + (count < used ? count : used));
}
