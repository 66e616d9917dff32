#include "symbols/bzimage.hpp"

#include "symbols/decompress.hpp"

#include <algorithm>
#include <cstring>

namespace vtice::symbols {

namespace {

// Offsets in the real-mode header (Documentation/x86/boot.rst).
constexpr std::size_t kSetupSects = 0x1f1;
constexpr std::size_t kBootFlag = 0x1fe;
constexpr std::size_t kHeaderMagic = 0x202;
constexpr std::size_t kProtocol = 0x206;
constexpr std::size_t kPayloadOffset = 0x248;
constexpr std::size_t kPayloadLength = 0x24c;
constexpr std::uint16_t kMinProtocol = 0x0208;  // first with payload_offset

}  // namespace

bool looks_like_bzimage(ByteSpan bytes)
{
	return bytes.size() > kPayloadLength + 4 && read_le<std::uint16_t>(bytes, kBootFlag) == 0xaa55 &&
	       std::memcmp(bytes.data() + kHeaderMagic, "HdrS", 4) == 0;
}

Result<BzImageInfo> parse_bzimage(ByteSpan bytes)
{
	if (!looks_like_bzimage(bytes))
		return make_error("not a bzImage (no 0xaa55 boot flag and 'HdrS' header)", 0);
	BzImageInfo info;
	info.protocol = *read_le<std::uint16_t>(bytes, kProtocol);
	if (info.protocol < kMinProtocol)
		return make_error("bzImage boot protocol too old to locate the payload", kProtocol);
	unsigned setup_sects = bytes[kSetupSects] ? bytes[kSetupSects] : 4;
	std::size_t protected_mode = (setup_sects + 1) * std::size_t{512};
	info.payload_offset = protected_mode + *read_le<std::uint32_t>(bytes, kPayloadOffset);
	info.payload_length = *read_le<std::uint32_t>(bytes, kPayloadLength);
	if (info.payload_offset > bytes.size() || info.payload_length > bytes.size() - info.payload_offset)
		return make_error("bzImage truncated: payload of " + std::to_string(info.payload_length) +
					  " bytes does not fit in the file",
				  bytes.size());
	info.compression = compression_of(bytes.subspan(info.payload_offset, info.payload_length));
	return info;
}

Result<Bytes> extract_bzimage(ByteSpan bytes)
{
	auto info = parse_bzimage(bytes);
	if (!info)
		return info.error();
	ByteSpan payload = bytes.subspan(info->payload_offset, info->payload_length);
	// The kernel build appends the inflated size as a little-endian u32.
	std::size_t hint = 0;
	if (payload.size() >= 4)
		hint = *read_le<std::uint32_t>(payload, payload.size() - 4);
	auto inflated = decompress(info->compression, payload, hint);
	if (!inflated) {
		Error error = inflated.error();
		if (error.offset)
			*error.offset += info->payload_offset;
		return error;
	}
	return inflated;
}

}  // namespace vtice::symbols
