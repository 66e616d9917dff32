#include "maps.hpp"

#include <algorithm>
#include <bit>

namespace vtice::probes {

std::int64_t hist_bucket(std::int64_t v)
{
	if (v < 0)
		return -1;
	return 64 - std::countl_zero(static_cast<std::uint64_t>(v));
}

std::int64_t lhist_buckets(const MapInfo &m)
{
	std::uint64_t span = static_cast<std::uint64_t>(m.lhist_max) - static_cast<std::uint64_t>(m.lhist_min);
	std::uint64_t step = static_cast<std::uint64_t>(m.lhist_step);
	return static_cast<std::int64_t>((span + step - 1) / step);
}

std::int64_t lhist_bucket(const MapInfo &m, std::int64_t v)
{
	if (v < m.lhist_min)
		return -1;
	if (v >= m.lhist_max)
		return lhist_buckets(m);
	std::uint64_t offset = static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(m.lhist_min);
	return static_cast<std::int64_t>(offset / static_cast<std::uint64_t>(m.lhist_step));
}

std::int64_t wrapping_add(std::int64_t a, std::int64_t b)
{
	return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

void aggregate(const MapInfo &m, Cell &cell, std::int64_t v)
{
	bool first = cell.count == 0;
	cell.count++;
	switch (m.kind) {
	case MapKind::Sum:
	case MapKind::Avg:
		cell.sum = wrapping_add(cell.sum, v);
		break;
	case MapKind::Min:
		cell.min = first ? v : std::min(cell.min, v);
		break;
	case MapKind::Max:
		cell.max = first ? v : std::max(cell.max, v);
		break;
	case MapKind::Hist:
		cell.buckets[hist_bucket(v)]++;
		break;
	case MapKind::Lhist:
		cell.buckets[lhist_bucket(m, v)]++;
		break;
	default:
		break;
	}
}

std::int64_t aggregate_value(const MapInfo &m, const Cell &cell)
{
	switch (m.kind) {
	case MapKind::Count: return cell.count;
	case MapKind::Sum: return cell.sum;
	case MapKind::Min: return cell.min;
	case MapKind::Max: return cell.max;
	case MapKind::Avg: return cell.count ? cell.sum / cell.count : 0;
	case MapKind::Int: {
		const std::int64_t *v = std::get_if<std::int64_t>(&cell.scalar);
		return v ? *v : 0;
	}
	default: return 0;
	}
}

MapStore::MapStore(const std::vector<MapInfo> &maps, std::size_t max_entries)
	: maps_(maps.size()), max_entries_(max_entries)
{
}

Cell *MapStore::update(std::size_t map, const Key &key)
{
	MapEntries &m = maps_[map];
	auto it = m.find(key);
	if (it != m.end())
		return &it->second;
	if (m.size() >= max_entries_) {
		refused_++;
		return nullptr;
	}
	return &m[key];
}

const Cell *MapStore::find(std::size_t map, const Key &key) const
{
	auto it = maps_[map].find(key);
	return it == maps_[map].end() ? nullptr : &it->second;
}

void MapStore::erase(std::size_t map, const Key &key) { maps_[map].erase(key); }

void MapStore::clear(std::size_t map) { maps_[map].clear(); }

}  // namespace vtice::probes
