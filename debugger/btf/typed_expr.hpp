// C expressions over kernel types, for `print`: casts of addresses to
// struct pointers, dereference, `->`, `.` and `[N]`, and `$current` (the
// task running on the selected vCPU, a `struct task_struct *`).
//
//   print *(struct file *)$rdi
//   print ((struct task_struct *)0xffff888003d1c000)->pid
//   print $current->comm
//   print $current->mm->pgd
//
// The operand of a cast is any numeric expression (debugger/expr.hpp) and
// runs to the end of its parentheses, as in C a cast binds looser than `->`:
// write ((struct file *)$rdi)->f_mode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "btf_types.hpp"

namespace vtice::dbg {
class Session;
}

namespace vtice::dbg::btf {

struct TypedValue {
	std::uint32_t type_id = 0;
	// A cast to "T *" where BTF has no such pointer type: type_id is then 0
	// and this is T (the value is the pointer).
	std::uint32_t cast_pointee = 0;
	std::optional<std::uint64_t> address;  // set for objects in memory (lvalues)
	std::uint64_t value = 0;               // pointer values that live nowhere (a cast, $current)
	std::uint32_t bit_shift = 0;           // bitfields: bits within the first byte...
	std::uint32_t bitfield_bits = 0;       // ...and their count (0: not a bitfield)
};

// True when text needs kernel types (a struct cast, ->, $current).
bool looks_typed(std::string_view text);

Result<TypedValue> evaluate_typed(std::string_view text, const Types &types, Session &session);
// "(struct file *) 0xffff8880..." for pointers, the object's fields for
// structs, a C string for char arrays, the number for integers.
Result<std::string> render(const TypedValue &value, const Types &types, Session &session);

}  // namespace vtice::dbg::btf
