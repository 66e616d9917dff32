// `ptype`: a type's definition with each member's offset and size, the way
// pahole shows a structure's layout.
#pragma once

#include <string>

#include "btf_types.hpp"

namespace vtice::dbg::btf {

// "struct file {\n\tfmode_t f_mode;\t/* 68 4 */\n...\n} /* size 232 */"
std::string describe_type(const Types &types, std::uint32_t type_id);

}  // namespace vtice::dbg::btf
