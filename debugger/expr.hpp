// Expressions for conditions, addresses and "print": C operators over
// 64-bit unsigned values.
//
//   primary: 123  0x7f  $rax  $rip  symbol  (expr)
//   unary:   - ! ~  *expr (reads 8 bytes)  *(u8*)expr ... *(u64*)expr
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

}  // namespace vtice::dbg
