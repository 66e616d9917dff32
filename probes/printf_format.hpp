// printf formats of probe programs: checked against their values once,
// before the program runs, then applied to each event's values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ast.hpp"
#include "vtice/result.hpp"

namespace vtice::probes {

using Value = std::variant<std::int64_t, std::string>;

// Text before a conversion, then the conversion ('\0': none, the tail).
struct FormatPiece {
	std::string text;
	std::string spec;	// "%-8" + length "ll" + conversion, for snprintf
	char conversion = '\0';	// d i u x X o s
};

// %d %i %u %x %X %o take numbers, %s strings, %% is '%'; flags "-+ #0",
// a width and a precision of at most three digits each; length modifiers
// (l, ll, h, z, j) are accepted and ignored: every number has 64 bits.
// The error's offset is in the format text.
Result<std::vector<FormatPiece>> parse_format(std::string_view format);
// The conversions' value types, in order.
std::vector<Type> format_types(const std::vector<FormatPiece> &pieces);
// values match format_types(pieces) (the checker saw to it).
std::string apply_format(const std::vector<FormatPiece> &pieces, const std::vector<Value> &values);

}  // namespace vtice::probes
