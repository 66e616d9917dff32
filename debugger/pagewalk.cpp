#include "hex.hpp"
#include "pagewalk.hpp"

#include <cstdio>

namespace vtice::dbg {

namespace {

// SDM Vol. 3A Table 4-15..4-20: bit 0 present, 1 R/W, 2 U/S, 7 PS, 63 XD;
// the next-level address is bits 51:12 (MAXPHYADDR up to 52).
constexpr std::uint64_t kPresent = 1ull << 0;
constexpr std::uint64_t kWritable = 1ull << 1;
constexpr std::uint64_t kUser = 1ull << 2;
constexpr std::uint64_t kPageSize = 1ull << 7;
constexpr std::uint64_t kNoExecute = 1ull << 63;
constexpr std::uint64_t kAddressMask = 0x000ffffffffff000ull;

const char *const kLevelNames[] = {"PT", "PD", "PDPT", "PML4", "PML5"};

}  // namespace

bool canonical(std::uint64_t va, bool la57)
{
	int bits = la57 ? 57 : 48;
	std::int64_t shifted = static_cast<std::int64_t>(va << (64 - bits)) >> (64 - bits);
	return static_cast<std::uint64_t>(shifted) == va;
}

Result<Translation> translate_address(std::uint64_t cr3, std::uint64_t va, const PhysicalReader &read, bool la57)
{
	if (!canonical(va, la57))
		return make_error("address " + hex(va) + " is not canonical");
	Translation t;
	t.writable = t.user = t.executable = true;
	std::uint64_t table = cr3 & kAddressMask;
	for (int level = la57 ? 4 : 3; level >= 0; level--) {
		unsigned shift = 12 + 9 * static_cast<unsigned>(level);
		std::uint64_t index = (va >> shift) & 511;
		std::uint64_t entry_address = table + index * 8;
		auto entry = read(entry_address);
		if (!entry)
			return make_error(std::string("cannot read ") + kLevelNames[level] + " entry " +
					  std::to_string(index) + " at physical " + hex(entry_address) + ": " +
					  entry.error().message);
		if (!(*entry & kPresent))
			return make_error(std::string(kLevelNames[level]) + " entry " + std::to_string(index) +
					  " for " + hex(va) + " is not present (" + hex(*entry) + ")");
		t.writable = t.writable && (*entry & kWritable);
		t.user = t.user && (*entry & kUser);
		t.executable = t.executable && !(*entry & kNoExecute);
		bool large = (level == 1 || level == 2) && (*entry & kPageSize);
		if (level == 0 || large) {
			t.page_size = 1ull << shift;
			std::uint64_t frame = *entry & kAddressMask & ~(t.page_size - 1);
			t.physical = frame | (va & (t.page_size - 1));
			return t;
		}
		if ((level == 3 || level == 4) && (*entry & kPageSize))
			return make_error(std::string(kLevelNames[level]) + " entry " + std::to_string(index) +
					  " has the reserved PS bit set (" + hex(*entry) + ")");
		table = *entry & kAddressMask;
	}
	return make_error("page walk did not end");  // unreachable
}

}  // namespace vtice::dbg
