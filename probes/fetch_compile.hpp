// Reads through a fn: probe's arguments, or a fn:NAME:return probe's return
// value, compiled to the ops of its fetch program (ast.hpp, FetchOp), which
// root runs at each hit: args->how->flags, str(arg1),
// ((struct file *)arg0)->f_path.dentry->d_name.name, str(retval->name).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ast.hpp"
#include "checker.hpp"
#include "kernel_types.hpp"

namespace vtice::probes {

enum class ReadAs { Number, String };

struct CompiledRead {
	// From its ARG or RETVAL to the value (Number) or to the string's
	// address (String); the caller adds the VALUE or STRING op.
	std::vector<FetchOp> ops;
	KernelTypes::Scalar scalar;	// Number: the bytes loaded, and how the console extends them
	std::uint8_t bit_shift = 0;	// a bitfield: its lowest bit in those bytes
	std::uint8_t bits = 0;		// ...and its width; 0 for a whole field
	bool operator==(const CompiledRead &) const;
};

// e: a Member, an Index or a Cast, or for String also an argument or retval itself,
// at point (fn:NAME: from the arguments; fn:NAME:return: from retval).
// Errors name e's position, or the field's.
Result<CompiledRead> compile_read(const Expr &e, ReadAs as, const ProbePoint &point, const ParamLookup &params,
				  const KernelTypes *types);

// reg()'s number (parser.cpp) as root numbers the general registers
// (enum vtice_fetch_reg: no RIP, no RFLAGS), or nothing for those two.
std::optional<std::uint8_t> root_register(std::int64_t reg);

// How much of root's accumulator a value of bytes (1, 2, 4, 8) and sign is
// (INDEX's and KEEP's cut): as the console widens it.
IndexWidth width_of(std::uint32_t bytes, bool is_signed);

// One probe's fetch program, read by read, within root's bounds: a read
// made twice is one VALUE slot; one string.
class FetchProgram {
public:
	// The read's VALUE slot (ops: from its ARG or RETVAL to its value).
	Result<std::uint8_t> add_value(const Pos &pos, std::vector<FetchOp> ops);
	// ops: from its ARG or RETVAL to the string's address.
	Result<void> add_string(const Pos &pos, std::vector<FetchOp> ops);
	const std::vector<FetchOp> &ops() const { return ops_; }

private:
	Result<void> append(const Pos &pos, const std::vector<FetchOp> &ops);

	std::vector<FetchOp> ops_;
	std::vector<std::vector<FetchOp>> values_;	// each slot's read
	std::optional<std::vector<FetchOp>> string_;
};

}  // namespace vtice::probes
