// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum of
// trace-file headers and chunks. Incremental: pass the previous value back in.
#pragma once

#include <cstdint>
#include <span>

namespace vtice::trace {

std::uint32_t crc32(std::span<const std::uint8_t> data, std::uint32_t previous = 0);

}  // namespace vtice::trace
