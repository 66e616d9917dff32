#include "crc32.hpp"

#include <array>

namespace vtice::trace {

static std::array<std::uint32_t, 256> make_table()
{
	std::array<std::uint32_t, 256> table{};
	for (std::uint32_t i = 0; i < 256; i++) {
		std::uint32_t c = i;
		for (int bit = 0; bit < 8; bit++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		table[i] = c;
	}
	return table;
}

std::uint32_t crc32(std::span<const std::uint8_t> data, std::uint32_t previous)
{
	static const std::array<std::uint32_t, 256> table = make_table();
	std::uint32_t c = ~previous;
	for (std::uint8_t byte : data)
		c = table[(c ^ byte) & 0xff] ^ (c >> 8);
	return ~c;
}

}  // namespace vtice::trace
