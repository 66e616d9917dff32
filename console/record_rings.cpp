// Consumer side of the record rings (record_rings.hpp).
#include "record_rings.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

namespace vtice::console {

RecordRing::RecordRing(void *map, size_t len, uint32_t cpu)
	: map_(map), len_(len), cpu_(cpu), hdr_(static_cast<vtice_ring_header *>(map)),
	  records_(reinterpret_cast<const vtice_record *>(static_cast<char *>(map) + hdr_->data_offset)),
	  nr_(hdr_->nr_records)
{
}

RecordRing::~RecordRing()
{
	munmap(map_, len_);
}

void RecordRing::drain(std::vector<vtice_record> &out)
{
	uint64_t head = __atomic_load_n(&hdr_->head, __ATOMIC_ACQUIRE);
	uint64_t tail = hdr_->tail;
	if (head - tail > nr_)	// never by the producer's rules; do not read garbage
		tail = head - nr_;
	for (; tail != head; tail++)
		out.push_back(records_[tail & (nr_ - 1)]);
	__atomic_store_n(&hdr_->tail, head, __ATOMIC_RELEASE);
}

void RecordRing::skip()
{
	__atomic_store_n(&hdr_->tail, __atomic_load_n(&hdr_->head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

uint64_t RecordRing::lost() const
{
	return __atomic_load_n(&hdr_->lost, __ATOMIC_RELAXED);
}

uint64_t RecordRing::waits() const
{
	return __atomic_load_n(&hdr_->waits, __ATOMIC_RELAXED);
}

uint64_t RecordRing::waits_run_out() const
{
	return __atomic_load_n(&hdr_->waits_run_out, __ATOMIC_RELAXED);
}

std::vector<std::vector<vtice_record>> drain_rings(const std::vector<std::unique_ptr<RecordRing>> &rings)
{
	std::vector<std::vector<vtice_record>> per_cpu(rings.size());
	for (std::size_t i = 0; i < rings.size(); i++)
		rings[i]->drain(per_cpu[i]);
	return per_cpu;
}

namespace {

// The header is the module's, but check it before trusting its geometry.
bool header_sane(const vtice_ring_header *h, size_t len)
{
	uint32_t n = h->nr_records;
	return h->version == VTICE_RING_VERSION && n && !(n & (n - 1)) &&
	       h->data_offset >= sizeof(*h) && h->data_offset + (uint64_t)n * sizeof(vtice_record) <= len;
}

}  // namespace

Result<std::vector<std::unique_ptr<RecordRing>>> map_record_rings(const DeviceFd &dev,
								  const std::string &path,
								  const vtice_status &status)
{
	std::vector<std::unique_ptr<RecordRing>> rings;
	size_t len = status.ring_mmap_size;
	for (uint32_t cpu = 0; cpu < status.nr_cpu_ids; cpu++) {
		void *map = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, dev.get(),
				 static_cast<off_t>(cpu) * static_cast<off_t>(len));
		if (map == MAP_FAILED) {
			if (errno == EINVAL)
				continue;	// not a possible CPU
			return make_error(path + ": mapping CPU " + std::to_string(cpu) +
					  "'s ring: " + std::strerror(errno));
		}
		if (!header_sane(static_cast<vtice_ring_header *>(map), len)) {
			munmap(map, len);
			return make_error(path + ": CPU " + std::to_string(cpu) +
					  "'s ring has a header this vtice does not understand");
		}
		rings.push_back(std::make_unique<RecordRing>(map, len, cpu));
	}
	if (rings.empty())
		return make_error(path + ": the module has no record rings");
	return rings;
}

}  // namespace vtice::console
