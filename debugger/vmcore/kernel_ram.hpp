// Where the stopped kernel has RAM: the "System RAM" entries at the top of
// its iomem resource tree, what /proc/iomem shows and what kexec-tools
// builds a kdump's PT_LOADs from. Read through the kernel's BTF, so no
// structure offset is guessed.
#pragma once

#include <cstdint>
#include <vector>

#include "../btf/btf_types.hpp"
#include "../session.hpp"
#include "vtice/result.hpp"

namespace vtice::dbg::vmcore {

struct PhysicalRange {
	std::uint64_t start = 0;  // page-aligned
	std::uint64_t size = 0;   // page multiple, never 0
};

// A hostile or corrupt tree (a loop, ranges out of order or past 2^52) is
// an error that names what it found.
Result<std::vector<PhysicalRange>> system_ram(Session &session, const btf::Types &types);

}  // namespace vtice::dbg::vmcore
