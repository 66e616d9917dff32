// The parts of a probe's predicate root can test at each hit before it
// records anything (fetch op KEEP, ioctl.h): a hit that fails them costs
// its exit and no record. Only "OPERAND CMP CONSTANT" conjuncts of a chain
// of &&, the operand one root computes exactly as the console will (an
// argument, a register, a read through one), the constant within 32 bits
// signed. The console still evaluates the whole predicate, so what root
// tests is only ever a subset of it: nothing it keeps is lost, nothing it
// drops would have passed.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ast.hpp"

namespace vtice::probes {

// An operand root can compute: its ops (from ARG, REG, ... to the value)
// and how much of the accumulator the console's value is.
struct RootOperand {
	std::vector<FetchOp> ops;
	IndexWidth width = IndexWidth::Full;
};
using RootOperandOf = std::function<std::optional<RootOperand>(const Expr &)>;

// Each testable conjunct's ops then its KEEP, in the predicate's order, as
// long as they fit in room ops; the others are left to the console.
// *tested (if given): how many conjuncts those ops test.
std::vector<FetchOp> root_tests(const Expr &predicate, const RootOperandOf &operand_of, std::size_t room,
				std::size_t *tested = nullptr);

// The terms of the predicate's top-level chain of &&.
std::size_t conjunct_count(const Expr &predicate);
// Those of them that are `comm == "NAME"` (either way round): what root's
// comm filter tests exactly when its comm is NAME.
std::size_t comm_conjuncts(const Expr &predicate, const std::string &comm);

}  // namespace vtice::probes
