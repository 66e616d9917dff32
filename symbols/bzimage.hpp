// x86 bzImage (vmlinuz): recognising the boot header and inflating the
// kernel payload in-process. Debian compresses with xz (liblzma).
#pragma once

#include <string>

#include "symbols/bytes.hpp"

namespace vtice::symbols {

struct BzImageInfo {
	std::uint16_t protocol = 0;        // boot protocol version, e.g. 0x020f
	std::size_t payload_offset = 0;    // into the file
	std::size_t payload_length = 0;
	std::string compression;           // "xz", "gzip", "lz4", "zstd", ... or "unknown"
};

bool looks_like_bzimage(ByteSpan bytes);
Result<BzImageInfo> parse_bzimage(ByteSpan bytes);
// The decompressed payload: the vmlinux ELF the boot code would run.
Result<Bytes> extract_bzimage(ByteSpan bytes);

// Inflates one .xz stream (with the kernel's x86 BCJ filter); size_hint
// reserves the output up front.
Result<Bytes> xz_decompress(ByteSpan input, std::size_t size_hint);

}  // namespace vtice::symbols
