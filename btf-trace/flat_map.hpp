// A small open-addressing hash map for the decoder's per-address caches.
// std::unordered_map allocates a node per entry and chases a pointer per
// lookup; this keeps the hot path of the decoder (one or two lookups per
// branch record) inside a flat array.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace vtice::trace {

struct AddressPair {
	std::uint64_t first, second;
	bool operator==(const AddressPair &) const = default;
};

inline std::uint64_t mix_hash(std::uint64_t key)
{
	key ^= key >> 31;
	key *= 0x9e3779b97f4a7c15ull;
	return key ^ (key >> 29);
}

inline std::uint64_t hash_key(std::uint64_t key) { return mix_hash(key); }
// One mix over both halves: the multiply spreads `first` over the high bits
// before the mix folds them down (two mixes cost ~6 more Ir per lookup).
inline std::uint64_t hash_key(const AddressPair &key) { return mix_hash(key.first * 0x9e3779b97f4a7c15ull + key.second); }

template <class Key, class Value>
class FlatMap {
public:
	FlatMap() : slots_(kInitialSlots) {}

	Value *find(const Key &key)
	{
		for (std::size_t i = hash_key(key) & mask_;; i = (i + 1) & mask_) {
			Slot &slot = slots_[i];
			if (!slot.used)
				return nullptr;
			if (slot.key == key)
				return &slot.value;
		}
	}

	// The caller has checked that key is absent. Out of line: it runs once
	// per key, and inlined with grow() it kept the lookups around it from
	// being inlined into the decoder's per-record path.
	[[gnu::noinline]] Value &insert(const Key &key, Value value)
	{
		if ((size_ + 1) * 2 > slots_.size())
			grow();
		Slot &slot = free_slot(key);
		slot = Slot{key, std::move(value), true};
		size_++;
		return slot.value;
	}

	std::size_t size() const { return size_; }

private:
	static constexpr std::size_t kInitialSlots = 1024;  // a power of two: probes wrap with a mask

	struct Slot {
		Key key{};
		Value value{};
		bool used = false;
	};

	Slot &free_slot(const Key &key)
	{
		std::size_t i = hash_key(key) & mask_;
		while (slots_[i].used)
			i = (i + 1) & mask_;
		return slots_[i];
	}

	void grow()
	{
		std::vector<Slot> old(slots_.size() * 2);
		old.swap(slots_);
		mask_ = slots_.size() - 1;
		for (Slot &slot : old) {
			if (slot.used)
				free_slot(slot.key) = std::move(slot);
		}
	}

	std::vector<Slot> slots_;
	// slots_.size() - 1, kept because a Slot of 40 bytes made every probe
	// divide the vector's byte length.
	std::size_t mask_ = kInitialSlots - 1;
	std::size_t size_ = 0;
};

}  // namespace vtice::trace
