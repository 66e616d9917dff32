// "0xffffffff81000000" for error messages and listings.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace vtice::dbg {

inline std::string hex(std::uint64_t value)
{
	char text[24];
	std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
	return text;
}

}  // namespace vtice::dbg
