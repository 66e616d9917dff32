// x86-64 page-table walk (SDM Vol. 3A §4.5, 4-level paging) for stubs that
// can only read physical memory, and for "info translate".
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "vtice/result.hpp"

namespace vtice::dbg {

using PhysicalReader = std::function<Result<std::uint64_t>(std::uint64_t physical)>;  // 8 bytes

struct Translation {
	std::uint64_t physical = 0;
	std::uint64_t page_size = 0;  // 4 KiB, 2 MiB or 1 GiB
	bool writable = false, user = false, executable = false;
};

// Walks PML4 -> PDPT -> PD -> PT from cr3. Non-present entries, reserved
// bits and non-canonical addresses are errors naming the level and entry.
// la57 selects 5-level paging (PML5 first), as CR4.LA57 says.
// Bits 63..47 (63..56 with 5-level paging, CR4.LA57) all equal: the
// addresses a CPU can use (SDM Vol. 1, 3.3.7.1).
bool canonical(std::uint64_t va, bool la57);

Result<Translation> translate_address(std::uint64_t cr3, std::uint64_t virtual_address,
				      const PhysicalReader &read, bool la57 = false);

}  // namespace vtice::dbg
