// Probe programs from text to syntax tree (docs/probes.md has the grammar).
// Errors name the position; nothing here knows what a probe point means or
// which values it has: the checker decides that.
#pragma once

#include <string_view>

#include "ast.hpp"
#include "vtice/result.hpp"

namespace vtice::probes {

inline constexpr std::size_t kMaxProbes = 256;		// probe blocks in a program
inline constexpr std::size_t kMaxPointsPerProbe = 64;
inline constexpr std::size_t kMaxStatements = 256;	// in one probe's block
inline constexpr std::size_t kMaxKeys = 8;		// @map[k1, ..., k8]
inline constexpr std::size_t kMaxPrintfArgs = 16;
inline constexpr unsigned kMaxDepth = 64;		// nesting of expressions

Result<Program> parse_program(std::string_view source);

}  // namespace vtice::probes
