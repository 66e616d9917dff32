/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Per-CPU record ring, shared through mmap(/dev/vtice).
 *
 * Layout of one CPU's mapping (VTICE_IOC_STATUS gives ring_mmap_size and
 * ring_records; CPU n is at file offset n * ring_mmap_size; map it
 * PROT_READ | PROT_WRITE, MAP_SHARED):
 *
 *   offset 0            struct vtice_ring_header (first page)
 *   header.data_offset  struct vtice_record records[header.nr_records]
 *
 * One producer (the hypervisor, in VMX root on that CPU) and one consumer
 * (user space). head and tail are free-running 64-bit counters; record i is
 * records[i & (nr_records - 1)].
 *  - producer: if the record (and a LOST record it owes, below) leaves two
 *    slots free it stores them, then publishes the new head (store-release).
 *    Otherwise the ring is full: the record is dropped and `lost` is
 *    incremented. The two slots are for the record that ends a trace
 *    (VTICE_REC_TRACE_STOP) and the LOST record before it: a trace's end
 *    always reaches the consumer.
 *  - consumer: reads head (load-acquire), copies records tail..head-1, then
 *    publishes the new tail (store-release). Only the consumer writes tail.
 * After a drop, the producer's next stored record is a VTICE_REC_LOST record
 * whose u.lost.count is the number dropped since the previous one, so the
 * consumer sees where in the stream the gap is; `lost` is the running total.
 * Overflow is never silent. The producer clamps a tail that is ahead of head
 * (a buggy consumer) and never reads records back, so a bad consumer can
 * only lose its own records.
 */
#ifndef VTICE_UAPI_RING_H
#define VTICE_UAPI_RING_H

#include <linux/types.h>

#define VTICE_RING_VERSION	1
#define VTICE_RING_HEADER_SIZE	4096	/* data_offset in version 1 */
/*
 * The longest a tracer waits in the hypervisor for the consumer to make
 * room in a full ring (each such wait counts in `waits`, one that ends
 * without room in `waits_run_out`).
 */
#define VTICE_RING_WAIT_MS	150
/* ...and at a traced call's SYSCALL or SYSRET, where it holds no kernel lock. */
#define VTICE_RING_END_WAIT_MS	1000

struct vtice_ring_header {
	__u32 size;		/* sizeof(struct vtice_ring_header) */
	__u32 version;		/* VTICE_RING_VERSION */
	__u32 cpu;
	__u32 nr_records;	/* power of two */
	__u64 data_offset;	/* bytes from the header to records[0] */
	__u64 reserved0[5];
	/* producer's cache line */
	__u64 head;		/* records ever stored */
	__u64 lost;		/* records ever dropped because the ring was full */
	__u64 waits;		/* times a tracer found the ring full and waited for the consumer */
	__u64 waits_run_out;	/* ...of them, waits the consumer did not end in time */
	__u64 reserved1[4];
	/* consumer's cache line */
	__u64 tail;		/* records consumed */
	__u64 reserved2[7];
};

#ifdef __cplusplus
static_assert(sizeof(struct vtice_ring_header) == 192, "vtice_ring_header layout");
#else
_Static_assert(sizeof(struct vtice_ring_header) == 192, "vtice_ring_header layout");
#endif

#endif /* VTICE_UAPI_RING_H */
