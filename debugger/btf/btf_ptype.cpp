#include "btf_ptype.hpp"

#include <bpf/btf.h>

namespace vtice::dbg::btf {

namespace {

std::string layout_line(const Types &types, const btf_type *outer, std::uint32_t index)
{
	const btf_member *m = btf_members(outer) + index;
	const char *name = btf__name_by_offset(types.raw(), m->name_off);
	std::uint32_t bit_offset = btf_member_bit_offset(outer, index);
	std::uint32_t bits = btf_member_bitfield_size(outer, index);
	std::string line = "\t" + types.declaration(m->type, name ? name : "");
	char where[64];
	if (bits) {
		line += ":" + std::to_string(bits);
		std::snprintf(where, sizeof(where), ";\t/* %u:%u %u bits */", bit_offset / 8, bit_offset % 8, bits);
	} else {
		auto size = types.size_of(m->type);
		std::snprintf(where, sizeof(where), ";\t/* %u %llu */", bit_offset / 8,
			      static_cast<unsigned long long>(size ? *size : 0));
	}
	return line + where + "\n";
}

}  // namespace

std::string describe_type(const Types &types, std::uint32_t type_id)
{
	std::uint32_t id = types.resolve(type_id);
	const btf_type *t = btf__type_by_id(types.raw(), id);
	std::string name = types.name_of(id);
	if (!t || !btf_is_composite(t)) {
		std::string text = "type = " + name;
		if (id != type_id)
			text = "type = " + types.name_of(type_id) + " = " + name;
		auto size = types.size_of(id);
		return text + (size ? " /* size " + std::to_string(*size) + " */" : "") + "\n";
	}
	std::string out = name + " {\t/* offset size */\n";
	for (std::uint32_t i = 0; i < btf_vlen(t); i++)
		out += layout_line(types, t, i);
	return out + "} /* size " + std::to_string(t->size) + " */\n";
}

}  // namespace vtice::dbg::btf
