/* SPDX-License-Identifier: GPL-2.0 */
/* Producer side of the per-CPU record ring (layout: include/uapi/vtice/ring.h). */
#ifndef VT_CORE_RING_H
#define VT_CORE_RING_H

#include "types.h"
/* The shared ABI headers (they use only <linux/types.h>'s __u64 names). */
#include <vtice/ring.h>
#include <vtice/records.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The header is shared with the kernel and mapped to user space, so the
 * producer keeps its own copies of what bounds its stores (the record count
 * and its head) and only publishes into the header, never trusts it.
 */
struct vt_ring {
	struct vtice_ring_header *hdr;
	struct vtice_record *records;
	u32 nr_records;		/* a power of two, from vt_ring_init */
	u64 head;		/* next record to write */
	u64 unreported_lost;	/* drops not yet announced by a LOST record */
};

void vt_ring_init(struct vt_ring *ring, void *mem, u32 nr_records, u32 cpu);
/*
 * Produce into a ring vt_ring_init() set up earlier, keeping its contents.
 * Reads the record count and head from the header once: call it before the
 * guest can reach the header.
 */
void vt_ring_attach(struct vt_ring *ring, void *mem);
/*
 * Slots an ordinary push leaves free: room for a LOST record and for the
 * record that ends a trace (vt_ring_push_final), so a reader that fell
 * behind still learns that the trace ended and how much of it it missed.
 */
#define VT_RING_RESERVE	2

/* Store one record; false when the ring was full and it was dropped. */
bool vt_ring_push(struct vt_ring *ring, const struct vtice_record *rec);
/* Store n records together or none of them (all n count as lost). */
bool vt_ring_push_group(struct vt_ring *ring, const struct vtice_record *recs, u32 n);
/* The record that ends a trace: it may take the reserve. */
bool vt_ring_push_final(struct vt_ring *ring, const struct vtice_record *rec);
/* n records that never reached the ring: counted, and announced by a LOST record. */
void vt_ring_lose(struct vt_ring *ring, u32 n);
/* A tracer waited for the consumer to make room; room: whether it came (counted in the header). */
void vt_ring_count_wait(struct vt_ring *ring, bool room);
/* Whether an ordinary push of n records (and a LOST record owed before them) fits now. */
bool vt_ring_has_room(const struct vt_ring *ring, u32 n);

/*
 * The consumer's side, for a reader in VMX root while the producer is
 * parked (the stub draining the rings for the debugger): records written
 * and not read, the index-th of them (0 = the oldest), and taking count of
 * them. A tail the consumer in user space left out of range reads as an
 * empty ring, and consuming then starts again at head.
 */
u64 vt_ring_unread(const struct vt_ring *ring);
const struct vtice_record *vt_ring_peek(const struct vt_ring *ring, u64 index);
void vt_ring_consume(struct vt_ring *ring, u64 count);

#ifdef __cplusplus
}
#endif

#endif /* VT_CORE_RING_H */
