// Which half of the address space an address is in. With 4-level paging the
// kernel half starts at 0xffff800000000000, with 5-level (LA57, which
// Debian's kernels use when the CPU has it) at 0xff00000000000000: in both,
// kernel addresses are exactly those with bit 63 set.
#pragma once

#include <cstdint>

namespace vtice::dbg {

inline bool is_kernel_address(std::uint64_t address)
{
	return (address >> 63) != 0;
}

}  // namespace vtice::dbg
