// Builds a trace file from a golden fixture directory: snippet.S is
// assembled with GNU as/ld at test time, branches.txt's labels are resolved
// through nm, and the trace carries the linked text as a CODE chunk and the
// snippet's functions (from readelf) as a SYMBOLS chunk.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "assemble.hpp"
#include "trace_file.hpp"

namespace vtice::test {

struct Fixture {
	Assembled object;
	std::uint64_t tsc_khz = 0;
	std::vector<vtice_record> records;
};

inline constexpr std::uint64_t kFixtureText = 0xffffffff81000000ull;

std::optional<Fixture> build_fixture(const std::string &dir, std::string &error);
std::vector<std::uint8_t> fixture_trace(const Fixture &fixture);
std::string read_text_file(const std::string &path);

}  // namespace vtice::test
