// The per-CPU record ring: single producer, consumer-owned tail, no silent loss.
#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "ring.h"
}

namespace {

struct Ring {
	std::vector<uint8_t> mem;
	vt_ring ring{};
	explicit Ring(uint32_t n) : mem(VTICE_RING_HEADER_SIZE + n * sizeof(vtice_record))
	{
		vt_ring_init(&ring, mem.data(), n, 3);
	}
	bool push(uint64_t seq)
	{
		vtice_record r{};
		r.type = VTICE_REC_TEST;
		r.u.test.sequence = seq;
		return vt_ring_push(&ring, &r);
	}
	const vtice_record &at(uint64_t i) const
	{
		return ring.records[i & (ring.hdr->nr_records - 1)];
	}
};

}  // namespace

TEST(Ring, HeaderDescribesLayout)
{
	Ring r(8);
	EXPECT_EQ(r.ring.hdr->size, sizeof(vtice_ring_header));
	EXPECT_EQ(r.ring.hdr->version, (uint32_t)VTICE_RING_VERSION);
	EXPECT_EQ(r.ring.hdr->cpu, 3u);
	EXPECT_EQ(r.ring.hdr->nr_records, 8u);
	EXPECT_EQ(r.ring.hdr->data_offset, (uint64_t)VTICE_RING_HEADER_SIZE);
}

// An ordinary push leaves VT_RING_RESERVE (2) slots free: of 8, 6 fill it.
constexpr uint64_t kFill = 8 - VT_RING_RESERVE;

TEST(Ring, FullRingDropsAndCounts)
{
	Ring r(8);
	for (uint64_t i = 0; i < kFill; i++)
		EXPECT_TRUE(r.push(i));
	EXPECT_FALSE(r.push(kFill));
	EXPECT_FALSE(r.push(kFill + 1));
	EXPECT_EQ(r.ring.hdr->head, kFill);
	EXPECT_EQ(r.ring.hdr->lost, 2u);
	for (uint64_t i = 0; i < kFill; i++)
		EXPECT_EQ(r.at(i).u.test.sequence, i) << "unread records are never overwritten";
}

TEST(Ring, GapIsMarkedByALostRecord)
{
	Ring r(8);
	for (uint64_t i = 0; i < kFill + 3; i++)
		r.push(i);			// 3 dropped
	r.ring.hdr->tail = kFill;		// consumer read everything
	EXPECT_TRUE(r.push(11));
	EXPECT_EQ(r.ring.hdr->head, kFill + 2);
	EXPECT_EQ(r.at(kFill).type, VTICE_REC_LOST);
	EXPECT_EQ(r.at(kFill).u.lost.count, 3u);
	EXPECT_EQ(r.at(kFill + 1).u.test.sequence, 11u);
	EXPECT_TRUE(r.push(12));
	EXPECT_EQ(r.at(kFill + 2).type, VTICE_REC_TEST) << "one LOST record per gap";
}

TEST(Ring, LostRecordNeedsRoomForBoth)
{
	Ring r(8);
	for (uint64_t i = 0; i < kFill + 1; i++)
		r.push(i);
	r.ring.hdr->tail = 1;	// one slot over the reserve: not enough for LOST + record
	EXPECT_FALSE(r.push(9));
	EXPECT_EQ(r.ring.hdr->lost, 2u);
	r.ring.hdr->tail = 2;
	EXPECT_TRUE(r.push(10));
	EXPECT_EQ(r.at(kFill).u.lost.count, 2u);
}

// The record that ends a trace takes the reserve: a reader that fell
// behind still sees the end, after the count of what it missed.
TEST(Ring, TheFinalRecordFitsAFullRingAfterItsLostRecord)
{
	Ring r(8);
	for (uint64_t i = 0; i < kFill + 5; i++)
		r.push(i);			// full, 5 dropped
	vtice_record end{};
	end.type = VTICE_REC_TRACE_STOP;
	EXPECT_TRUE(vt_ring_push_final(&r.ring, &end));
	EXPECT_EQ(r.ring.hdr->head, 8u);
	EXPECT_EQ(r.at(kFill).type, VTICE_REC_LOST);
	EXPECT_EQ(r.at(kFill).u.lost.count, 5u);
	EXPECT_EQ(r.at(kFill + 1).type, VTICE_REC_TRACE_STOP);
	EXPECT_FALSE(vt_ring_has_room(&r.ring, 1));
}

TEST(Ring, HasRoomAsAnOrdinaryPushWouldFind)
{
	Ring r(8);
	for (uint64_t i = 0; i + 1 < kFill; i++)
		r.push(i);
	EXPECT_TRUE(vt_ring_has_room(&r.ring, 1));
	EXPECT_FALSE(vt_ring_has_room(&r.ring, 2));
	EXPECT_TRUE(r.push(99));
	EXPECT_FALSE(vt_ring_has_room(&r.ring, 1));
}

TEST(Ring, WrapsAround)
{
	Ring r(8);
	for (uint64_t i = 0; i < 100; i++) {
		ASSERT_TRUE(r.push(i));
		r.ring.hdr->tail = r.ring.hdr->head;
	}
	EXPECT_EQ(r.at(99).u.test.sequence, 99u);
	EXPECT_EQ(r.ring.hdr->lost, 0u);
}

TEST(Ring, ConfusedConsumerCannotCauseOverwrite)
{
	Ring r(8);
	r.push(0);
	r.ring.hdr->tail = 5;	// ahead of head
	EXPECT_FALSE(r.push(1));
	r.ring.hdr->tail = 0;
	EXPECT_TRUE(r.push(2));
}

// The header is writable by the kernel and mapped to user space: whatever
// it says, the producer writes only inside its own records.
TEST(Ring, CorruptHeaderCannotMoveTheProducerOutOfTheRing)
{
	Ring r(8);
	std::vector<uint8_t> before = r.mem;
	r.ring.hdr->nr_records = 0xffffffffu;
	r.ring.hdr->head = 0x123456789ull;
	r.ring.hdr->tail = 0x123456789ull;
	for (uint64_t i = 0; i < 20; i++)
		r.push(100 + i);
	EXPECT_EQ(r.mem.size(), before.size());
	EXPECT_EQ(r.ring.head, 0u) << "its own head, not the header's; the tail ahead of it stops it";
	r.ring.hdr->tail = 0;
	EXPECT_TRUE(r.push(7));
	EXPECT_EQ(r.ring.head, 2u) << "a LOST record for the 20 drops, then 7";
	EXPECT_EQ(r.ring.hdr->head, 2u) << "published back into the header";
	EXPECT_EQ(r.ring.records[0].type, (uint32_t)VTICE_REC_LOST);
	EXPECT_EQ(r.ring.records[0].u.lost.count, 20u);
	EXPECT_EQ(r.ring.records[1].u.test.sequence, 7u);
}

// The consumer in root (the stub draining for the debugger): oldest first,
// across the wrap, and taking frees room for the producer.
TEST(Ring, ARootReaderPeeksOldestFirstAndConsumingFreesRoom)
{
	Ring r(8);
	for (uint64_t i = 0; i < kFill; i++)
		ASSERT_TRUE(r.push(i));
	vt_ring_consume(&r.ring, 4);
	EXPECT_EQ(r.ring.hdr->tail, 4u);
	for (uint64_t i = kFill; i < kFill + 4; i++)
		ASSERT_TRUE(r.push(i)) << "room the reader made";
	ASSERT_EQ(vt_ring_unread(&r.ring), kFill);
	for (uint64_t i = 0; i < kFill; i++)
		EXPECT_EQ(vt_ring_peek(&r.ring, i)->u.test.sequence, 4 + i) << "across the wrap";
	EXPECT_EQ(vt_ring_peek(&r.ring, kFill), nullptr);
	vt_ring_consume(&r.ring, 100);
	EXPECT_EQ(vt_ring_unread(&r.ring), 0u) << "more than there is takes all";
	EXPECT_EQ(r.ring.hdr->tail, r.ring.hdr->head);
}

TEST(Ring, ATailOutOfRangeReadsEmptyAndConsumingStartsAgainAtHead)
{
	Ring r(8);
	for (uint64_t i = 0; i < 3; i++)
		ASSERT_TRUE(r.push(i));
	r.ring.hdr->tail = 1000;	// a confused (or hostile) consumer in user space
	EXPECT_EQ(vt_ring_unread(&r.ring), 0u);
	EXPECT_EQ(vt_ring_peek(&r.ring, 0), nullptr);
	vt_ring_consume(&r.ring, 1);
	EXPECT_EQ(r.ring.hdr->tail, 3u);
}
