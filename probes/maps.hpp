// The maps a probe program fills: values keyed by tuples, and the
// aggregations (count, sum, min, max, avg, hist, lhist) as bpftrace defines
// them. Bounded: a map holds at most max_entries keys; updates that would
// add more are counted, never silently dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checker.hpp"
#include "printf_format.hpp"

namespace vtice::probes {

using Key = std::vector<Value>;

struct Cell {
	Value scalar = std::int64_t{0};		// MapKind::Int, MapKind::String
	std::int64_t count = 0, sum = 0, min = 0, max = 0;
	std::map<std::int64_t, std::uint64_t> buckets;	// hist, lhist: bucket -> count
};

using MapEntries = std::map<Key, Cell>;

// The bucket of v in hist(): -1 below 0, 0 for 0, k for [2^(k-1), 2^k).
std::int64_t hist_bucket(std::int64_t v);
// The bucket of v in lhist(min, max, step): -1 below min, the last (one
// past the steps) at max and above.
std::int64_t lhist_bucket(const MapInfo &m, std::int64_t v);
std::int64_t lhist_buckets(const MapInfo &m);	// steps between min and max, rounded up

// a + b modulo 2^64: sums wrap, in the console as in root.
std::int64_t wrapping_add(std::int64_t a, std::int64_t b);
// One event's value into a cell of an aggregating map.
void aggregate(const MapInfo &m, Cell &cell, std::int64_t v);
// What reading a count/sum/min/max/avg map gives (avg: sum / count).
std::int64_t aggregate_value(const MapInfo &m, const Cell &cell);

class MapStore {
public:
	MapStore(const std::vector<MapInfo> &maps, std::size_t max_entries);

	// The cell of key, made when missing; null when the map is full.
	Cell *update(std::size_t map, const Key &key);
	const Cell *find(std::size_t map, const Key &key) const;
	void erase(std::size_t map, const Key &key);
	void clear(std::size_t map);
	const MapEntries &entries(std::size_t map) const { return maps_[map]; }
	// Updates refused because their map was full.
	std::uint64_t refused() const { return refused_; }
	std::size_t max_entries() const { return max_entries_; }

private:
	std::vector<MapEntries> maps_;
	std::size_t max_entries_;
	std::uint64_t refused_ = 0;
};

}  // namespace vtice::probes
