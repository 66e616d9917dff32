// vtice trace syscall's two ring drainers (console/drain_threads.cpp)
// against a producer that follows include/uapi/vtice/ring.h: every record
// once, in order, with the two taking turns on one ring; and the two on
// two different CPUs, as the kernel reports them.
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "drain_threads.hpp"

namespace vtice::console {
namespace {

constexpr uint32_t kRecords = 16;

// One ring in anonymous memory, as the module lays it out; RecordRing unmaps it.
std::unique_ptr<RecordRing> make_ring(vtice_ring_header *&hdr, vtice_record *&records)
{
	size_t len = VTICE_RING_HEADER_SIZE + kRecords * sizeof(vtice_record);
	void *map = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	EXPECT_NE(map, MAP_FAILED);
	hdr = static_cast<vtice_ring_header *>(map);
	hdr->size = sizeof(*hdr);
	hdr->version = VTICE_RING_VERSION;
	hdr->nr_records = kRecords;
	hdr->data_offset = VTICE_RING_HEADER_SIZE;
	records = reinterpret_cast<vtice_record *>(static_cast<char *>(map) + VTICE_RING_HEADER_SIZE);
	return std::make_unique<RecordRing>(map, len, 0);
}

TEST(DrainThreads, EveryRecordOnceAndInOrderWhileTheProducerWaitsForRoom)
{
	vtice_ring_header *hdr;
	vtice_record *records;
	std::vector<std::unique_ptr<RecordRing>> rings;
	rings.push_back(make_ring(hdr, records));
	constexpr uint64_t kTotal = 20000;	// the ring refills 1,250 times
	std::vector<vtice_record> got;
	{
		DrainThreads drain(rings, 0);
		std::thread producer([&] {
			for (uint64_t n = 0; n < kTotal; n++) {
				while (__atomic_load_n(&hdr->head, __ATOMIC_RELAXED) -
					       __atomic_load_n(&hdr->tail, __ATOMIC_ACQUIRE) >= kRecords)
					std::this_thread::yield();	// full: wait for a drainer, as root does
				records[n % kRecords].tsc = n;
				__atomic_store_n(&hdr->head, n + 1, __ATOMIC_RELEASE);
			}
		});
		auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
		while (got.size() < kTotal && std::chrono::steady_clock::now() < deadline) {
			auto part = drain.take();
			got.insert(got.end(), part[0].begin(), part[0].end());
			std::this_thread::yield();
		}
		producer.join();
	}
	ASSERT_EQ(got.size(), kTotal);
	for (uint64_t n = 0; n < kTotal; n++)
		ASSERT_EQ(got[n].tsc, n) << "record " << n;
}

TEST(DrainThreads, TheTwoDrainersRunOnTwoDifferentCpus)
{
	cpu_set_t allowed;
	ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	if (CPU_COUNT(&allowed) < 2)
		GTEST_SKIP() << "one CPU here: one drainer, unpinned";
	std::vector<std::unique_ptr<RecordRing>> none;
	DrainThreads drain(none, 1);
	ASSERT_EQ(drain.cpus().size(), 2u);
	EXPECT_NE(drain.cpus()[0], drain.cpus()[1]);
	for (int cpu : drain.cpus())
		EXPECT_TRUE(CPU_ISSET(cpu, &allowed));
}

TEST(DrainThreads, WhatWasDrainedBeforeStopIsStillTaken)
{
	vtice_ring_header *hdr;
	vtice_record *records;
	std::vector<std::unique_ptr<RecordRing>> rings;
	rings.push_back(make_ring(hdr, records));
	DrainThreads drain(rings, 0);
	records[0].tsc = 7;
	__atomic_store_n(&hdr->head, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&hdr->tail, __ATOMIC_ACQUIRE) != 1)
		std::this_thread::yield();
	drain.stop();
	auto part = drain.take();
	ASSERT_EQ(part[0].size(), 1u);
	EXPECT_EQ(part[0][0].tsc, 7u);
}

}  // namespace
}  // namespace vtice::console
