// The probe language's tokens: numbers, strings, names, map names (@x),
// operators; // and /* */ comments are skipped. Every token keeps its
// position for errors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ast.hpp"
#include "vtice/result.hpp"

namespace vtice::probes {

enum class TokenKind { Name, Number, String, Map, Punct, End };

struct Token {
	TokenKind kind = TokenKind::End;
	Pos pos;
	std::string text;		// the name, the operator, "@x", a string's bytes (escapes applied), a number as written
	std::int64_t number = 0;
};

// Limits that keep a hostile program from costing more than it may.
inline constexpr std::size_t kMaxProgramBytes = 64 * 1024;
inline constexpr std::size_t kMaxStringBytes = 256;

Result<std::vector<Token>> tokenize(std::string_view source);

}  // namespace vtice::probes
