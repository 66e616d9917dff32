// The kernel's types, as the probe checker asks for them when a program
// reads through an argument or a return value (args->how->flags,
// ((struct file *)arg0)->f_mode, retval->name).
// The console answers from the running kernel's BTF; tests from a file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vtice/result.hpp"

namespace vtice::probes {

class KernelTypes {
public:
	struct Field {
		std::uint64_t offset = 0;	// bytes from the start of the struct
		std::uint32_t type_id = 0;
		std::uint32_t bit_shift = 0;	// a bitfield: its lowest bit, counted from offset's byte
		std::uint32_t bits = 0;		// ...and its width; 0 for a whole-byte member
	};
	struct Array {
		std::uint32_t element = 0;	// the elements' type
		std::uint64_t count = 0;	// 0: a flexible array member (name[])
	};
	struct Scalar {
		std::uint32_t bytes = 8;
		bool is_signed = false;
	};

	virtual ~KernelTypes() = default;
	// "struct file", "union bpf_attr": the type's id, or why there is none.
	virtual Result<std::uint32_t> find(std::string_view name) const = 0;
	// What a pointer type points to (through typedefs and qualifiers).
	virtual std::optional<std::uint32_t> pointee(std::uint32_t type_id) const = 0;
	// A struct's or union's member by name, in its unnamed members too; an
	// error for a missing one or a type that has no members.
	virtual Result<Field> field(std::uint32_t type_id, std::string_view name) const = 0;
	// How a value of the type is read: an integer's or enum's width and
	// sign, a pointer's 8 unsigned bytes; nothing for structs and arrays.
	virtual std::optional<Scalar> scalar(std::uint32_t type_id) const = 0;
	virtual bool is_char_array(std::uint32_t type_id) const = 0;	// char comm[16]
	virtual std::optional<Array> array(std::uint32_t type_id) const = 0;	// nothing for a non-array
	virtual std::optional<std::uint64_t> size(std::uint32_t type_id) const = 0;	// bytes; nothing for void
	virtual bool is_struct(std::uint32_t type_id) const = 0;	// or a union
	virtual std::string name(std::uint32_t type_id) const = 0;	// as C spells it
	// What a kernel function returns (retval's type at fn:NAME:return);
	// nothing for void or a function BTF does not have. function: NAME or
	// MODULE:NAME (qualified_function).
	virtual std::optional<std::uint32_t> return_type(std::string_view function) const = 0;
};

}  // namespace vtice::probes
