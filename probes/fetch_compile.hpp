// Reads through a fn: probe's arguments, compiled to the ops of its fetch
// program (ast.hpp, FetchOp), which root runs at each hit: args->how->flags,
// ((struct file *)arg0)->f_path.dentry->d_name.name, str(arg1).
#pragma once

#include <string>
#include <vector>

#include "ast.hpp"
#include "checker.hpp"
#include "kernel_types.hpp"

namespace vtice::probes {

enum class ReadAs { Number, String };

struct CompiledRead {
	// From its ARG to the value (Number) or to the string's address
	// (String); the caller adds the VALUE or STRING op.
	std::vector<FetchOp> ops;
	KernelTypes::Scalar scalar;	// Number: how the console extends the value
};

// e: a Member or a Cast, or for String also an argument itself, in a probe
// on function. Errors name e's position, or the field's.
Result<CompiledRead> compile_read(const Expr &e, ReadAs as, const std::string &function, const ParamLookup &params,
				  const KernelTypes *types);

}  // namespace vtice::probes
