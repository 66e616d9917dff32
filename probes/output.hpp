// Where a probe program's output goes: printf text and maps, as plain text
// the way bpftrace prints them, or as JSON lines (-o FILE).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "maps.hpp"

namespace vtice::probes {

class Output {
public:
	virtual ~Output() = default;
	virtual void text(std::string_view printed) = 0;
	virtual void map(const MapInfo &info, const MapEntries &entries) = 0;
	// The run's counts, once at the end (JSON keeps them; text leaves them
	// to the command's stderr summary).
	virtual void summary(std::string_view /*json_fields*/) {}
};

// "@name[k1, k2]: value" lines sorted by value; histograms as bucket rows
// with bars. Writes to out, which stays the caller's.
class TextOutput : public Output {
public:
	explicit TextOutput(std::FILE *out) : out_(out) {}
	void text(std::string_view printed) override;
	void map(const MapInfo &info, const MapEntries &entries) override;

private:
	std::FILE *out_;
};

// One JSON object per line: {"type":"printf","text":...},
// {"type":"map","name":...,"kind":...,"entries":[...]}, {"type":"summary",...}.
class JsonOutput : public Output {
public:
	explicit JsonOutput(std::FILE *out) : out_(out) {}
	void text(std::string_view printed) override;
	void map(const MapInfo &info, const MapEntries &entries) override;
	void summary(std::string_view json_fields) override;

private:
	std::FILE *out_;
};

// The text of one map, as TextOutput writes it (for tests and print()).
std::string format_map_text(const MapInfo &info, const MapEntries &entries);
std::string format_map_json(const MapInfo &info, const MapEntries &entries);
// A kstack value's frames, leaf first (the value holds them a line each).
std::vector<std::string> stack_frames(const std::string &frames);
// A histogram bucket's range as text: "[4, 8)", "[1K, 2K)", "(..., 0)".
std::string bucket_label(const MapInfo &info, std::int64_t bucket);

}  // namespace vtice::probes
