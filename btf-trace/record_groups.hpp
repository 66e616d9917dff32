// Record groups (include/uapi/vtice/records.h): a head record, then the
// SYSCALL_DATA records its flags count. Syscall events, probe hits and
// profile samples all come this way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

extern "C" {
#include <vtice/records.h>
}

namespace vtice::trace {

// Applies the n DATA records from recs[i] on, advancing i past them. False
// when one is missing (a record that is not DATA starts the next group and
// is left there) or apply refuses one.
template <class Apply>
bool read_group_data(std::span<const vtice_record> recs, std::size_t &i, std::size_t n, Apply apply)
{
	for (std::size_t k = 0; k < n; k++) {
		if (i >= recs.size() || recs[i].type != VTICE_REC_SYSCALL_DATA)
			return false;
		if (!apply(recs[i++]))
			return false;
	}
	return true;
}

// A STACK record's two words, appended to the stack copied so far.
inline void append_stack_words(std::vector<std::uint8_t> &stack, const vtice_record &rec)
{
	const auto *bytes = reinterpret_cast<const std::uint8_t *>(rec.u.raw);
	stack.insert(stack.end(), bytes, bytes + sizeof(rec.u.raw));
}

}  // namespace vtice::trace
