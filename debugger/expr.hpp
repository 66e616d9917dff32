// Expressions for conditions, addresses and "print": C operators over
// 64-bit unsigned values.
//
//   primary: 123  0x7f  $rax  $rip  symbol  (expr)
//   unary:   - ! ~  *expr (reads 8 bytes)  *(TYPE *)expr, TYPE a C integer
//            type (char, short, int, long, long long, unsigned ..., u8..u64,
//            s8..s64) or void: reads that many bytes;  &symbol (= symbol)
//   binary:  * / %  + -  << >>  < <= > >=  == !=  &  ^  |  &&  ||
//
// Bad input (unknown register or symbol, unreadable memory, division by
// zero, trailing text) is an error naming the offset in the text.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "vtice/result.hpp"

namespace vtice::dbg {

struct ExprContext {
	std::function<Result<std::uint64_t>(std::string_view name)> reg;  // "rax", without '$'
	std::function<Result<std::uint64_t>(std::uint64_t address, unsigned size)> mem;
	std::function<std::optional<std::uint64_t>(std::string_view name)> sym;
};

Result<std::uint64_t> evaluate_expression(std::string_view text, const ExprContext &ctx);

// "(long *)" or "( unsigned int* )" at the start of text: the size of the
// pointed-to integer (void: 8, as gdb reads a word) and the characters the
// cast spans. Nothing for any other text, struct casts included.
struct PointerCast {
	unsigned size;
	std::size_t length;
};
std::optional<PointerCast> integer_pointer_cast(std::string_view text);

}  // namespace vtice::dbg
