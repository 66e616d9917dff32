// The hypervisor's per-CPU record rings, mapped from /dev/vtice and read as
// their consumer (include/uapi/vtice/ring.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

extern "C" {
#include <vtice/records.h>
#include <vtice/ring.h>
}

#include "device.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

class RecordRing {
public:
	RecordRing(void *map, size_t len, uint32_t cpu);
	RecordRing(const RecordRing &) = delete;
	RecordRing &operator=(const RecordRing &) = delete;
	~RecordRing();

	uint32_t cpu() const { return cpu_; }
	// Appends the records stored since the last call and frees their slots.
	void drain(std::vector<vtice_record> &out);
	// Forgets what is there now (records from before this reader).
	void skip();
	// The producer's running totals (ring.h): records dropped, waits for
	// this reader to make room, and waits it did not end in time.
	uint64_t lost() const;
	uint64_t waits() const;
	uint64_t waits_run_out() const;

private:
	void *map_;
	size_t len_;
	uint32_t cpu_;
	vtice_ring_header *hdr_;
	const vtice_record *records_;
	uint32_t nr_;
};

// One poll: what each ring stored since the last, ring by ring.
std::vector<std::vector<vtice_record>> drain_rings(const std::vector<std::unique_ptr<RecordRing>> &rings);

// Every CPU's ring the module has (CPUs that are not possible are skipped).
// The device must be open read-write: the consumer writes its tail.
Result<std::vector<std::unique_ptr<RecordRing>>> map_record_rings(const DeviceFd &dev,
								  const std::string &path,
								  const vtice_status &status);

}  // namespace vtice::console
