#include "symbols/bzimage.hpp"

#include <cstring>
#include <lzma.h>

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

std::string compression_of(ByteSpan payload)
{
	struct Magic {
		const char *name;
		const char *bytes;
		std::size_t size;
	};
	static const Magic magics[] = {
		{"xz", "\xfd" "7zXZ\0", 6}, {"gzip", "\x1f\x8b", 2}, {"bzip2", "BZh", 3},
		{"lzma", "\x5d\x00\x00", 3}, {"lzo", "\x89LZO", 4}, {"lz4", "\x02\x21\x4c\x18", 4},
		{"zstd", "\x28\xb5\x2f\xfd", 4},
	};
	for (const Magic &magic : magics)
		if (payload.size() >= magic.size && std::memcmp(payload.data(), magic.bytes, magic.size) == 0)
			return magic.name;
	return "unknown";
}

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

Result<Bytes> xz_decompress(ByteSpan input, std::size_t size_hint)
{
	lzma_stream stream = LZMA_STREAM_INIT;
	if (lzma_stream_decoder(&stream, UINT64_MAX, 0) != LZMA_OK)
		return make_error("liblzma: cannot start the xz decoder");
	std::unique_ptr<lzma_stream, void (*)(lzma_stream *)> guard(&stream, lzma_end);
	Bytes out(size_hint ? size_hint : input.size() * 4);
	stream.next_in = input.data();
	stream.avail_in = input.size();
	for (;;) {
		if (stream.total_out == out.size())
			out.resize(out.size() * 2);
		stream.next_out = out.data() + stream.total_out;
		stream.avail_out = out.size() - stream.total_out;
		lzma_ret ret = lzma_code(&stream, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret == LZMA_OK && stream.avail_out == 0)
			continue;
		if (ret == LZMA_BUF_ERROR || ret == LZMA_OK)
			return make_error("xz stream truncated after " + std::to_string(stream.total_out) +
						  " output bytes",
					  stream.total_in);
		return make_error("xz stream corrupt (liblzma error " + std::to_string(ret) + ")", stream.total_in);
	}
	out.resize(stream.total_out);
	return out;
}

Result<Bytes> extract_bzimage(ByteSpan bytes)
{
	auto info = parse_bzimage(bytes);
	if (!info)
		return info.error();
	ByteSpan payload = bytes.subspan(info->payload_offset, info->payload_length);
	if (info->compression != "xz")
		return make_error("bzImage payload is compressed with " + info->compression +
					  "; only xz is supported (extract it with scripts/extract-vmlinux)",
				  info->payload_offset);
	// The kernel build appends the inflated size as a little-endian u32.
	std::size_t hint = 0;
	if (payload.size() >= 4)
		hint = *read_le<std::uint32_t>(payload, payload.size() - 4);
	auto inflated = xz_decompress(payload, hint > (1u << 30) ? 0 : hint);
	if (!inflated) {
		Error error = inflated.error();
		if (error.offset)
			*error.offset += info->payload_offset;
		return error;
	}
	return inflated;
}

}  // namespace vtice::symbols
