#include "output.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "vtice/json_string.hpp"
#include "vtice/split_lines.hpp"

namespace vtice::probes {
namespace {

constexpr int kBarWidth = 52;

// A stack key, as bpftrace prints one: a frame a line, indented, the
// bracket after it on a line of its own.
std::string stack_text(const std::string &frames)
{
	std::string out = "\n";
	for (const std::string &f : stack_frames(frames))
		out += "\t" + f + "\n";
	return out;
}

std::string key_text(const MapInfo &info, const Key &key)
{
	std::string out;
	for (std::size_t k = 0; k < key.size(); k++) {
		const Value &v = key[k];
		if (k)
			out += ", ";
		if (const std::int64_t *i = std::get_if<std::int64_t>(&v))
			out += std::to_string(*i);
		else if (info.keys[k] == Type::Stack)
			out += stack_text(std::get<std::string>(v));
		else
			out += std::get<std::string>(v);
	}
	return out;
}

std::string map_label(const MapInfo &info, const Key &key)
{
	return key.empty() ? info.name : info.name + "[" + key_text(info, key) + "]";
}

std::string value_json(const Value &v, Type type = Type::Int)
{
	if (const std::int64_t *i = std::get_if<std::int64_t>(&v))
		return std::to_string(*i);
	if (type != Type::Stack)
		return json_string(std::get<std::string>(v));
	std::string out = "[";
	for (const std::string &f : stack_frames(std::get<std::string>(v)))
		out += (out.size() > 1 ? "," : "") + json_string(f);
	return out + "]";
}

bool is_histogram(const MapInfo &info) { return info.kind == MapKind::Hist || info.kind == MapKind::Lhist; }

// 1024 -> "1K", 3 -> "3"; exact multiples only.
std::string with_suffix(std::uint64_t v)
{
	static const char suffixes[] = "KMGTPE";
	int unit = -1;
	while (v >= 1024 && v % 1024 == 0 && unit < 5) {
		v /= 1024;
		unit++;
	}
	return std::to_string(v) + (unit >= 0 ? std::string(1, suffixes[unit]) : "");
}

std::string signed_label(std::int64_t v)
{
	return v < 0 ? std::to_string(v) : with_suffix(static_cast<std::uint64_t>(v));
}

// Sorted as bpftrace sorts: by value, then key (strings by key).
std::vector<const MapEntries::value_type *> sorted_entries(const MapInfo &info, const MapEntries &entries)
{
	std::vector<const MapEntries::value_type *> out;
	for (const auto &e : entries)
		out.push_back(&e);
	if (info.kind != MapKind::String && !is_histogram(info))
		std::stable_sort(out.begin(), out.end(), [&](auto *a, auto *b) {
			return aggregate_value(info, a->second) < aggregate_value(info, b->second);
		});
	return out;
}

std::string histogram_rows(const MapInfo &info, const Cell &cell)
{
	if (cell.buckets.empty())
		return "";
	std::int64_t lo = cell.buckets.begin()->first, hi = cell.buckets.rbegin()->first;
	std::uint64_t most = 0;
	for (const auto &[bucket, n] : cell.buckets)
		most = std::max(most, n);
	std::string out;
	for (std::int64_t b = lo; b <= hi; b++) {
		auto it = cell.buckets.find(b);
		std::uint64_t n = it == cell.buckets.end() ? 0 : it->second;
		int bar = static_cast<int>(n * kBarWidth / most);
		char line[160];
		std::snprintf(line, sizeof(line), "%-20s %8llu |%s%*s|\n", bucket_label(info, b).c_str(),
			      static_cast<unsigned long long>(n), std::string(static_cast<std::size_t>(bar), '@').c_str(),
			      kBarWidth - bar, "");
		out += line;
	}
	return out;
}

}  // namespace

std::vector<std::string> stack_frames(const std::string &frames)
{
	return split_lines(frames);
}

std::string bucket_label(const MapInfo &info, std::int64_t bucket)
{
	if (info.kind == MapKind::Hist) {
		if (bucket < 0)
			return "(..., 0)";
		if (bucket <= 1)
			return "[" + std::to_string(bucket) + "]";
		std::uint64_t low = 1ull << (bucket - 1);
		std::string high = bucket == 64 ? "..." : with_suffix(low * 2);
		return "[" + with_suffix(low) + ", " + high + ")";
	}
	if (bucket < 0)
		return "(..., " + signed_label(info.lhist_min) + ")";
	if (bucket >= lhist_buckets(info))
		return "[" + signed_label(info.lhist_max) + ", ...)";
	std::int64_t low = info.lhist_min + bucket * info.lhist_step;
	std::int64_t high = std::min(low + info.lhist_step, info.lhist_max);
	return "[" + signed_label(low) + ", " + signed_label(high) + ")";
}

std::string format_map_text(const MapInfo &info, const MapEntries &entries)
{
	std::string out;
	for (const auto *e : sorted_entries(info, entries)) {
		if (is_histogram(info)) {
			out += map_label(info, e->first) + ":\n" + histogram_rows(info, e->second) + "\n";
			continue;
		}
		std::string value = info.kind == MapKind::String ? std::get<std::string>(e->second.scalar)
								  : std::to_string(aggregate_value(info, e->second));
		out += map_label(info, e->first) + ": " + value + "\n";
	}
	return out;
}

std::string format_map_json(const MapInfo &info, const MapEntries &entries)
{
	static const char *const kinds[] = {"int", "string", "count", "sum", "min", "max", "avg", "hist", "lhist"};
	std::string out = "{\"type\":\"map\",\"name\":" + json_string(info.name) + ",\"kind\":\"" +
			  kinds[static_cast<int>(info.kind)] + "\",\"entries\":[";
	bool first = true;
	for (const auto *e : sorted_entries(info, entries)) {
		out += first ? "" : ",";
		first = false;
		out += "{\"key\":[";
		for (std::size_t i = 0; i < e->first.size(); i++)
			out += (i ? "," : "") + value_json(e->first[i], info.keys[i]);
		out += "],";
		if (is_histogram(info)) {
			out += "\"buckets\":[";
			bool first_bucket = true;
			for (const auto &[bucket, n] : e->second.buckets) {
				out += first_bucket ? "" : ",";
				first_bucket = false;
				out += "{\"bucket\":" + json_string(bucket_label(info, bucket)) +
				       ",\"count\":" + std::to_string(n) + "}";
			}
			out += "]}";
		} else if (info.kind == MapKind::String) {
			out += "\"value\":" + value_json(e->second.scalar) + "}";
		} else {
			out += "\"value\":" + std::to_string(aggregate_value(info, e->second)) + "}";
		}
	}
	return out + "]}";
}

void TextOutput::text(std::string_view printed) { std::fwrite(printed.data(), 1, printed.size(), out_); }

void TextOutput::map(const MapInfo &info, const MapEntries &entries)
{
	std::string text = format_map_text(info, entries);
	std::fwrite(text.data(), 1, text.size(), out_);
	std::fflush(out_);
}

void JsonOutput::text(std::string_view printed)
{
	std::fprintf(out_, "{\"type\":\"printf\",\"text\":%s}\n", json_string(printed).c_str());
}

void JsonOutput::map(const MapInfo &info, const MapEntries &entries)
{
	std::fprintf(out_, "%s\n", format_map_json(info, entries).c_str());
}

void JsonOutput::summary(std::string_view json_fields)
{
	std::fprintf(out_, "{\"type\":\"summary\",%.*s}\n", static_cast<int>(json_fields.size()), json_fields.data());
}

}  // namespace vtice::probes
