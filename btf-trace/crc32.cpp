// Slicing-by-8: eight table lookups per 8 input bytes instead of one per
// byte, which keeps checksumming well ahead of reading records.
#include "crc32.hpp"

#include <array>
#include <cstring>

namespace vtice::trace {

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

static Tables make_tables()
{
	Tables t{};
	for (std::uint32_t i = 0; i < 256; i++) {
		std::uint32_t c = i;
		for (int bit = 0; bit < 8; bit++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		t[0][i] = c;
	}
	for (std::uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
	return t;
}

std::uint32_t crc32(std::span<const std::uint8_t> data, std::uint32_t previous)
{
	static const Tables t = make_tables();
	std::uint32_t c = ~previous;
	const std::uint8_t *p = data.data();
	std::size_t n = data.size();
	for (; n >= 8; n -= 8, p += 8) {
		std::uint32_t lo, hi;
		std::memcpy(&lo, p, 4);  // little-endian host (x86-64)
		std::memcpy(&hi, p + 4, 4);
		lo ^= c;
		c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
		    t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
	}
	for (; n > 0; n--, p++)
		c = t[0][(c ^ *p) & 0xff] ^ (c >> 8);
	return ~c;
}

}  // namespace vtice::trace
