// Guest "physical memory" for tests of code that walks the guest's page
// tables: 4 KiB frames made on demand, and page tables built by hand from
// the SDM's formats (Vol. 3A 4.5, Tables 4-14..4-20).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace vtice::fake {

class GuestPages {
public:
	static constexpr uint64_t P = 1, RW = 2, PS = 0x80;

	std::vector<uint64_t> mapped;	// every pa the walker asked to map
	uint64_t next_table = 0x100000;	// new_table() hands out the page above

	// For vt_guest_mem.map, with this object as ctx.
	static void *map_fn(void *ctx, unsigned long long pa)	// u64 as the C side spells it
	{
		auto *self = static_cast<GuestPages *>(ctx);
		self->mapped.push_back(pa);
		return self->frame(pa & ~0xfffull) + (pa & 0xfff);
	}

	uint8_t *frame(uint64_t pa)
	{
		auto &f = frames_[pa];
		if (!f) {
			f = std::make_unique<uint8_t[]>(4096);
			std::memset(f.get(), 0, 4096);
		}
		return f.get();
	}

	uint64_t &entry(uint64_t table, uint32_t index)
	{
		return reinterpret_cast<uint64_t *>(frame(table))[index];
	}

	uint64_t new_table()
	{
		next_table += 0x1000;
		frame(next_table);
		return next_table;
	}

	// Map gva -> pa with a leaf at `leaf_level` (1: 4K, 2: 2M, 3: 1G).
	void map(uint64_t root, int levels, uint64_t gva, uint64_t pa, int leaf_level = 1)
	{
		uint64_t table = root;
		for (int level = levels; level > leaf_level; level--) {
			uint32_t idx = (gva >> (12 + 9 * (level - 1))) & 0x1ff;
			uint64_t &e = entry(table, idx);
			if (!(e & P))
				e = new_table() | P | RW;
			table = e & 0x000ffffffffff000ull;
		}
		uint32_t idx = (gva >> (12 + 9 * (leaf_level - 1))) & 0x1ff;
		entry(table, idx) = pa | P | RW | (leaf_level > 1 ? PS : 0);
	}

	// Bytes into a mapped frame (within one page).
	void put(uint64_t pa, const void *data, size_t len)
	{
		std::memcpy(frame(pa & ~0xfffull) + (pa & 0xfff), data, len);
	}

	// ...and out of it.
	void get(uint64_t pa, void *data, size_t len)
	{
		std::memcpy(data, frame(pa & ~0xfffull) + (pa & 0xfff), len);
	}

private:
	std::map<uint64_t, std::unique_ptr<uint8_t[]>> frames_;
};

}  // namespace vtice::fake
