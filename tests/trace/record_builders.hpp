// Records as the hypervisor would write them, for tests and benchmarks.
#pragma once

#include <cstdint>

#include "vtice/records.h"

namespace vtice::test {

inline vtice_record branch_record(std::uint16_t cpu, std::uint64_t tsc, std::uint64_t from, std::uint64_t to,
				  std::uint32_t flags = VTICE_BRANCH_FROM_BTF)
{
	vtice_record r{};
	r.type = VTICE_REC_BRANCH;
	r.cpu = cpu;
	r.flags = flags;
	r.tsc = tsc;
	r.u.branch.from = from;
	r.u.branch.to = to;
	return r;
}

}  // namespace vtice::test
